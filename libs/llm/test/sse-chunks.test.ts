import { providerSseEvent as event, PROVIDER_SSE_DONE } from '@quill/fake-llm';
import { APIError } from 'openai';
import { describe, expect, it } from 'vitest';
import { createChunkReader, isTransportAbort } from '../src/sse-chunks.ts';

const bytes = (text: string) => new TextEncoder().encode(text);
const chunk = (content: string) => ({ id: 'c', choices: [{ index: 0, delta: { content } }] });
// Well-formed events come from the fake provider's encoder; the broken ones below (unterminated,
// named, not JSON) are written out by hand, since no encoder would produce them.

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
    expect(unterminated.read(bytes(`data: ${JSON.stringify(chunk('b'))}`))).toEqual([]);
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
    named.read(bytes(`event: error\ndata: ${JSON.stringify({ message: 'bad' })}\n\n`));
    expect(named.failure).toBeInstanceOf(APIError);
    const malformed = createChunkReader(headers);
    malformed.read(bytes('data: {not json\n\n'));
    expect(malformed.failure).toBeInstanceOf(SyntaxError);
  });

  it('takes an aborted read for the end of the stream, not an API error', () => {
    expect(isTransportAbort(new DOMException('stopped', 'AbortError'))).toBe(true);
    expect(isTransportAbort(new Error('socket hang up'))).toBe(false);
  });
});
