import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collectChat, type LlmProvider } from '../src/index.ts';
import { isLoopback, requestFields } from '../src/request-fields.ts';
import { type FailoverRig, startRig } from './failover-helpers.ts';

let rig: FailoverRig;

beforeAll(async () => {
  rig = await startRig();
});
afterAll(async () => {
  await rig?.close();
});

interface SentBody {
  max_tokens?: number;
  max_completion_tokens?: number;
  user?: string;
  safety_identifier?: string;
  prompt_cache_key?: string;
}

describe('what a request carries besides the messages', () => {
  it('sends each provider the fields it is configured for, and x-quill-* headers only where allowed', async () => {
    const hosted: LlmProvider = {
      ...rig.providers[0]!,
      maxOutputTokens: 4000,
      roleMaxOutputTokens: { router: 300 },
      request: {
        outputTokensField: 'max_completion_tokens',
        userField: 'safety_identifier',
        promptCacheKey: true,
        quillHeaders: false,
      },
    };
    const proxy: LlmProvider = { ...rig.providers[1]!, maxOutputTokens: 4000 };
    rig.primary.addScript({ responses: [{ error: { status: 500 } }, { text: '一' }, { text: '二' }] });
    const client = rig.client({ providers: [hosted, proxy] });
    const ask = (role: string, sessionId: string) =>
      collectChat(
        client.streamChat({ messages: [{ role: 'user', content: '你好' }], role, runId: 'rf-1', sessionId }),
      );

    // The first call fails over to the proxy (and pins session-a there); session-b stays on the hosted one.
    await ask('writer', 'session-a');
    await ask('writer', 'session-b');
    await ask('router', 'session-b');

    const sentToHosted = rig.primary.requests();
    expect(sentToHosted).toHaveLength(3);
    for (const request of sentToHosted) {
      // Not configured for them: no internal header reaches this provider, so the fake cannot tell the run.
      expect(Object.keys(request.headers).filter((name) => name.startsWith('x-quill'))).toEqual([]);
      expect(request.run_id).toBeNull();
      expect(request.headers.authorization).toBe('Bearer ****');
    }
    const bodies = sentToHosted.map((request) => request.body as SentBody);
    expect(bodies.map((body) => body.max_completion_tokens)).toEqual([4000, 4000, 300]);
    expect(bodies.every((body) => body.max_tokens === undefined && body.user === undefined)).toBe(true);
    // A stable opaque id per session: the same for both calls of session-b, another for session-a.
    expect(bodies[1]!.safety_identifier).toBe(bodies[2]!.safety_identifier);
    expect(bodies[0]!.safety_identifier).not.toBe(bodies[1]!.safety_identifier);
    expect(bodies[1]!.safety_identifier).toMatch(/^quill-[0-9a-f]{32}$/);
    expect(JSON.stringify(bodies)).not.toContain('session-');
    // The cache key follows the session and role (the prompt prefix differs per role).
    expect(bodies[0]!.prompt_cache_key).toMatch(/^quill-[0-9a-f]{32}$/);
    expect(bodies[1]!.prompt_cache_key).not.toBe(bodies[2]!.prompt_cache_key);

    // The loopback proxy with the defaults: classic fields, and the headers (auto).
    const [sentToProxy] = rig.backup.requests({ run_id: 'rf-1' });
    expect(sentToProxy!.headers).toMatchObject({ 'x-quill-role': 'writer', 'x-quill-run-id': 'rf-1' });
    const proxyBody = sentToProxy!.body as SentBody;
    expect(proxyBody.max_tokens).toBe(4000);
    expect(proxyBody.user).toBe(bodies[0]!.safety_identifier);
    expect(proxyBody.prompt_cache_key).toBeUndefined();
  });
});

describe('requestFields', () => {
  const remote: LlmProvider = {
    name: 'primary',
    baseUrl: 'https://api.openai.com/v1',
    apiKey: 'k',
    model: 'gpt-4o',
    maxInputTokens: 128_000,
  };

  it('sends no x-quill-* header to a remote host unless told to', () => {
    expect(requestFields(remote, { role: 'writer', runId: 'r' }).headers).toEqual({});
    expect(
      requestFields({ ...remote, request: { quillHeaders: true } }, { role: 'writer', runId: 'r' }).headers,
    ).toEqual({ 'x-quill-role': 'writer', 'x-quill-run-id': 'r' });
  });

  it('a cap from the pinned role definition goes before the configured ones', () => {
    const provider = { ...remote, maxOutputTokens: 100, roleMaxOutputTokens: { writer: 200 } };
    expect(requestFields(provider, { role: 'writer', runId: 'r' }).body).toEqual({ max_tokens: 200 });
    expect(requestFields(provider, { role: 'writer', runId: 'r', maxOutputTokens: 300 }).body).toEqual({
      max_tokens: 300,
    });
  });

  it('sends no cap with outputTokensField none, and no identifier without a session', () => {
    const fields = requestFields(
      { ...remote, maxOutputTokens: 100, request: { outputTokensField: 'none', promptCacheKey: true } },
      { role: 'writer', runId: 'r' },
    );
    expect(fields.body).toEqual({});
  });

  it.each([
    ['http://127.0.0.1:4010/v1', true],
    ['http://localhost:4010/v1', true],
    ['http://[::1]:4010/v1', true],
    ['http://fake-llm:4010/v1', false],
    ['https://api.deepseek.com/v1', false],
    ['http://127.0.0.1.example.com/v1', false],
  ])('isLoopback(%s) is %s', (url, expected) => {
    expect(isLoopback(url)).toBe(expected);
  });
});
