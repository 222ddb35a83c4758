import { createServer, request as httpRequest, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type FakeLlm, startFakeLlm } from '@quill/fake-llm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collectChat, createLlmClient, LlmCallError, type LlmProvider } from '../src/index.ts';

// The model client sends through undici's request API (model-transport.ts); redirects must still
// be followed as `fetch` followed them (a refusal's body reaching the SDK's error: failures.test.ts).
let fake: FakeLlm;
let front: Server;
let frontUrl: string;
const seenByFront: Array<{ method?: string; url?: string; headers: IncomingHttpHeaders }> = [];

beforeAll(async () => {
  fake = await startFakeLlm({ port: 0 });
  const fakeOrigin = fake.url.replace(/\/v1$/, '');
  // `/same307/…` and `/same308/…` redirect to `/v1/…` here; `/v1/…` is passed on to the fake LLM
  // as it is; `/other/…` redirects to the fake LLM itself (another origin: another port).
  front = createServer((request, response) => {
    const url = request.url ?? '';
    seenByFront.push({ method: request.method, url, headers: request.headers });
    const same = /^\/same(30[78])(\/.*)$/.exec(url);
    if (same) {
      response.writeHead(Number(same[1]), { location: same[2] });
      response.end();
    } else if (url.startsWith('/other/')) {
      response.writeHead(307, { location: `${fakeOrigin}${url.slice('/other'.length)}` });
      response.end();
    } else {
      const onward = httpRequest(
        `${fakeOrigin}${url}`,
        { method: request.method, headers: request.headers },
        (reply) => {
          response.writeHead(reply.statusCode ?? 502, reply.headers);
          reply.pipe(response);
        },
      );
      request.pipe(onward);
    }
  });
  await new Promise<void>((resolve) => front.listen(0, '127.0.0.1', resolve));
  frontUrl = `http://127.0.0.1:${(front.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await fake.close();
  await new Promise((resolve) => front.close(resolve));
});

const clientAt = (baseUrl: string) => {
  const provider: LlmProvider = {
    name: 'primary',
    baseUrl,
    apiKey: 'secret-key',
    model: 'quill-fake-1',
    maxInputTokens: 128_000,
  };
  return createLlmClient({ provider, timeoutMs: 10_000 });
};

describe('model transport', () => {
  it.each(['307', '308'])(
    'follows a same-origin %s with the POST, its body and its key, and streams the reply',
    async (status) => {
      const runId = `redirect-${status}`;
      fake.addScript({ match: { run_id: runId }, responses: [{ text: '雨夜里旧书店的灯还亮着' }] });
      const texts: string[] = [];
      const result = await collectChat(
        clientAt(`${frontUrl}/same${status}/v1`).streamChat({
          messages: [{ role: 'user', content: '写' }],
          role: 'writer',
          runId,
        }),
        (event) => {
          if (event.type === 'text') texts.push(event.delta);
        },
      );
      expect(texts.join('')).toBe('雨夜里旧书店的灯还亮着');
      expect(result.finishReason).toBe('stop');
      const received = fake.requests({ run_id: runId });
      expect(received).toHaveLength(1);
      expect((received[0]!.body as { messages: unknown[] }).messages.at(-1)).toMatchObject({
        role: 'user',
        content: '写',
      });
      const seen = seenByFront.filter((each) => each.headers['x-quill-run-id'] === runId);
      expect(seen.map((each) => [each.method, each.url?.split('/').slice(0, 3).join('/')])).toEqual([
        ['POST', `/same${status}/v1`],
        ['POST', '/v1/chat'],
      ]);
      expect(seen.every((each) => each.headers.authorization === 'Bearer secret-key')).toBe(true);
    },
  );

  it('does not carry the key to another origin: that provider refuses the call', async () => {
    const error = await collectChat(
      clientAt(`${frontUrl}/other/v1`).streamChat({
        messages: [{ role: 'user', content: '写' }],
        role: 'writer',
        runId: 'redirect-other',
      }),
    ).then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(LlmCallError);
    // The fake LLM answers 401 `invalid_api_key` only to a request without a key.
    expect(error).toMatchObject({ kind: 'http', status: 401, providerCode: 'invalid_api_key' });
    const seen = seenByFront.filter((each) => each.headers['x-quill-run-id'] === 'redirect-other');
    expect(seen.map((each) => each.headers.authorization)).toEqual(['Bearer secret-key']);
  });
});
