import { providerSseEvent as event, PROVIDER_SSE_DONE, providerSseData } from '@quill/fake-llm';
import { APIError } from 'openai';
import { describe, expect, it } from 'vitest';
import { createChunkReader, isTransportAbort } from '../src/sse-chunks.ts';

const bytes = (text: string) => new TextEncoder().encode(text);
const chunk = (content: string) => ({ id: 'c', choices: [{ index: 0, delta: { content } }] });
// Events come from the fake provider's encoder, cut or prefixed where a test needs a broken one.

describe('chat-completions SSE chunks', () => {
  it('returns each chunk once its event is complete, across reads split inside a character and a line', () => {
    const reader = createChunkReader(new Headers());
    const whole = bytes(`${event(chunk('é'))}: keep-alive\r\n\r\n${event(chunk('ünd'))}${PROVIDER_SSE_DONE}`);
    const seen = [];
    for (let offset = 0; offset < whole.length; offset += 3)
      seen.push(...reader.read(whole.subarray(offset, offset + 3)));
    seen.push(...reader.end());
    expect(seen).toEqual([chunk('é'), chunk('ünd')]);
    expect(reader.done).toBe(true);
    expect(reader.failure).toBeUndefined();
  });

  it('reads nothing after [DONE], and an event the body ended inside at the end', () => {
    const reader = createChunkReader(new Headers());
    expect(reader.read(bytes(`${event(chunk('a'))}${PROVIDER_SSE_DONE}${event(chunk('late'))}`))).toEqual([
      chunk('a'),
    ]);
    const unterminated = createChunkReader(new Headers());
    // The encoder's event without the blank line that ends it.
    expect(unterminated.read(bytes(event(chunk('b')).trimEnd()))).toEqual([]);
    expect(unterminated.end()).toEqual([chunk('b')]);
  });

  it('fails as the SDK does on an error event or payload, after the chunks before it', () => {
    const headers = new Headers({ 'x-request-id': 'r1' });
    const reader = createChunkReader(headers);
    expect(
      reader.read(
        bytes(`${event(chunk('a'))}${event({ error: { message: 'overloaded' } })}${event(chunk('b'))}`),
      ),
    ).toEqual([chunk('a')]);
    expect(reader.failure).toBeInstanceOf(APIError);
    expect(reader.failure?.message).toContain('overloaded');
    const named = createChunkReader(headers);
    named.read(bytes(`event: error\n${event({ message: 'bad' })}`));
    expect(named.failure).toBeInstanceOf(APIError);
    const malformed = createChunkReader(headers);
    malformed.read(bytes(providerSseData('{not json')));
    expect(malformed.failure).toBeInstanceOf(SyntaxError);
  });

  it('takes an aborted read for the end of the stream, not an API error', () => {
    expect(isTransportAbort(new DOMException('stopped', 'AbortError'))).toBe(true);
    expect(isTransportAbort(new Error('socket hang up'))).toBe(false);
  });
});
