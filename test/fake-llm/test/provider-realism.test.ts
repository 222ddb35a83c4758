import { connect } from 'node:net';
import type OpenAI from 'openai';
import { APIError } from 'openai';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type FakeLlm, startFakeLlm } from '../src/index.ts';
import { openaiClient, streamCompletion } from './helpers.ts';

let fake: FakeLlm;
let client: OpenAI;

beforeAll(async () => {
  fake = await startFakeLlm({ port: 0 });
  client = openaiClient(fake.url);
});
afterEach(() => fake.clearScripts());
afterAll(async () => {
  await fake.close();
});

const run = (runId: string) => ({ 'x-quill-role': 'writer', 'x-quill-run-id': runId });
const hello = [{ role: 'user' as const, content: '你好' }];

/** The raw bytes of one streamed completion, as separate socket reads. */
function rawStream(runId: string): Promise<Buffer[]> {
  const body = JSON.stringify({ model: 'm', messages: hello, stream: true });
  return new Promise((resolve, reject) => {
    const reads: Buffer[] = [];
    const socket = connect(fake.port, '127.0.0.1', () => {
      socket.write(
        `POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\nauthorization: Bearer k\r\nx-quill-run-id: ${runId}\r\n` +
          `content-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
      );
    });
    // The SSE response keeps the connection alive: the last HTTP chunk (size 0) ends the read.
    socket.on('data', (data) => {
      reads.push(data);
      if (Buffer.concat(reads).includes('\r\n0\r\n\r\n')) {
        socket.destroy();
        resolve(reads);
      }
    });
    socket.on('end', () => resolve(reads));
    socket.on('error', reject);
  });
}

describe('deltas and bytes split where real providers split them', () => {
  it('delta_chars cuts <file> tags and tool-call arguments at every character', async () => {
    fake.addScript({
      match: { run_id: 'split-chars' },
      responses: [
        {
          text: '<file>\n雨夜\n</file>\n好',
          tool_calls: [{ name: 'create_file', arguments: { title: '第一章', file_type: 'draft' } }],
          delta_chars: 1,
        },
      ],
    });
    const result = await streamCompletion(client, hello, run('split-chars'));
    const contents = result.chunks.flatMap((chunk) => chunk.choices[0]?.delta.content || []);
    expect(contents).toEqual([...'<file>\n雨夜\n</file>\n好']);
    const argumentPieces = result.chunks.flatMap(
      (chunk) => chunk.choices[0]?.delta.tool_calls?.[0]?.function?.arguments || [],
    );
    expect(argumentPieces).toEqual([...JSON.stringify({ title: '第一章', file_type: 'draft' })]);
    expect(JSON.parse(result.toolCalls[0]!.arguments)).toEqual({ title: '第一章', file_type: 'draft' });
  });

  it('write_bytes: 1 sends every byte on its own, breaking inside UTF-8 characters', async () => {
    fake.addScript({
      match: { run_id: 'split-bytes' },
      responses: [{ text: '雨夜里的旧书店', write_bytes: 1 }],
    });
    const whole = Buffer.concat(await rawStream('split-bytes'));
    // Every socket write is one HTTP chunk: read the chunk framing back.
    const payloads: Buffer[] = [];
    let offset = whole.indexOf('\r\n\r\n') + 4;
    while (offset < whole.length) {
      const lineEnd = whole.indexOf('\r\n', offset);
      const size = Number.parseInt(whole.subarray(offset, lineEnd).toString('latin1'), 16);
      if (size === 0) break;
      payloads.push(whole.subarray(lineEnd + 2, lineEnd + 2 + size));
      offset = lineEnd + 2 + size + 2;
    }
    expect(payloads.length).toBeGreaterThan(100);
    expect(payloads.every((payload) => payload.length === 1)).toBe(true);
    // A lead byte of a three-byte character (雨 is E9 9B A8) went out without its continuation bytes.
    expect(payloads.some((payload) => payload[0] === 0xe9)).toBe(true);
    expect(Buffer.concat(payloads).toString('utf8')).toContain('"content":"雨"');
    // And a client reassembles the text exactly.
    fake.addScript({
      match: { run_id: 'split-bytes-sdk' },
      responses: [{ text: '雨夜里的旧书店', write_bytes: 1 }],
    });
    expect((await streamCompletion(client, hello, run('split-bytes-sdk'))).text).toBe('雨夜里的旧书店');
  });
});

describe('usage and reasoning in the shapes providers use', () => {
  it('usage_style last_chunk: no usage: null fields, the usage rides on the finish chunk', async () => {
    fake.addScript({
      match: { run_id: 'usage-last' },
      responses: [{ text: '好的', usage_style: 'last_chunk' }],
    });
    const result = await streamCompletion(client, hello, run('usage-last'));
    const last = result.chunks.at(-1)!;
    expect(last.choices[0]?.finish_reason).toBe('stop');
    expect(last.usage).toMatchObject({ completion_tokens: 2 });
    expect(result.chunks.slice(0, -1).every((chunk) => !('usage' in chunk))).toBe(true);
  });

  it.each(['reasoning_content', 'reasoning'] as const)('streams reasoning as %s deltas', async (field) => {
    fake.addScript({
      match: { run_id: `reason-${field}` },
      responses: [{ reasoning: '先想一想', text: '好', reasoning_field: field }],
    });
    const result = await streamCompletion(client, hello, run(`reason-${field}`));
    const reasoning = result.chunks
      .map((chunk) => (chunk.choices[0]?.delta as Record<string, unknown> | undefined)?.[field])
      .filter((value): value is string => typeof value === 'string')
      .join('');
    expect(reasoning).toBe('先想一想');
  });
});

describe('refusals, rate limits and resets', () => {
  it.each([
    [401, 'invalid_api_key'],
    [402, 'insufficient_quota'],
    [403, 'model_not_found'],
    [429, 'rate_limit_exceeded'],
    [503, null],
  ])('answers %i with the error object providers send', async (status, code) => {
    fake.addScript({
      match: { run_id: `status-${status}` },
      responses: [{ error: { status, retry_after: 7 } }],
    });
    const error = await streamCompletion(client, hello, run(`status-${status}`)).catch(
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(APIError);
    expect((error as APIError).status).toBe(status);
    expect((error as APIError).code ?? null).toBe(code);
    expect((error as APIError).headers?.get('retry-after')).toBe('7');
  });

  it('sends an HTTP-date retry-after and retry-after-ms as scripted', async () => {
    const date = new Date(Date.now() + 5000).toUTCString();
    fake.addScript({
      match: { run_id: 'retry-headers' },
      responses: [{ error: { status: 429, retry_after: date, retry_after_ms: 1500 } }],
    });
    const response = await fetch(`${fake.url}/chat/completions`, {
      method: 'POST',
      headers: {
        authorization: 'Bearer k',
        'x-quill-run-id': 'retry-headers',
        'content-type': 'application/json',
      },
      body: JSON.stringify({ messages: hello }),
    });
    expect(response.status).toBe(429);
    expect(response.headers.get('retry-after')).toBe(date);
    expect(response.headers.get('retry-after-ms')).toBe('1500');
  });

  it('resets the connection mid-reasoning: the client sees the stream die after some reasoning', async () => {
    fake.addScript({
      match: { run_id: 'reset' },
      responses: [
        {
          reasoning: '想'.repeat(50),
          text: '不会到',
          disconnect_after_reasoning_chars: 10,
          disconnect_how: 'reset',
        },
      ],
    });
    let reasoning = '';
    let text = '';
    const error = await (async () => {
      const stream = await client.chat.completions.create(
        { model: 'm', messages: hello, stream: true },
        { headers: run('reset') },
      );
      for await (const chunk of stream) {
        const delta = chunk.choices[0]?.delta as { content?: string; reasoning_content?: string } | undefined;
        reasoning += delta?.reasoning_content ?? '';
        text += delta?.content ?? '';
      }
    })().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(Error);
    expect(reasoning).toBe('想'.repeat(10));
    expect(text).toBe('');
  });

  it('records the headers of every request, the key masked', async () => {
    await streamCompletion(client, hello, { ...run('headers'), 'x-extra': 'yes' });
    const [recorded] = fake.requests({ run_id: 'headers' });
    expect(recorded!.headers).toMatchObject({
      'x-quill-role': 'writer',
      'x-quill-run-id': 'headers',
      'x-extra': 'yes',
      authorization: 'Bearer ****',
    });
  });
});
