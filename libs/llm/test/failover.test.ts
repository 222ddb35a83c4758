import { createServer } from 'node:net';
import { createRedis } from '@quill/redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LlmCallError } from '../src/index.ts';
import { call, type FailoverRig, startRig } from './failover-helpers.ts';

let rig: FailoverRig;

beforeAll(async () => {
  rig = await startRig();
});
afterAll(async () => {
  await rig?.close();
});

const pinOf = (sessionId: string) => rig.redis.get(rig.keys.llmPin(sessionId));

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('failover before any output', () => {
  it.each([
    ['500', 500],
    ['429', 429],
  ])(
    'primary answering %s: the backup serves the call and the session pin moves to it',
    async (_name, status) => {
      const runId = `fo-${status}`;
      const sessionId = `session-${status}`;
      rig.primary.addScript({ match: { run_id: runId }, responses: [{ error: { status } }] });
      rig.backup.addScript({ match: { run_id: runId }, responses: [{ text: '备用供应商的回答' }] });

      const { text, attempts, result } = await call(rig.client(), { runId, sessionId });

      expect(text).toBe('备用供应商的回答');
      expect(result).toMatchObject({ provider: 'backup', model: 'quill-fake-backup', failovers: 1 });
      expect(rig.primary.requests({ run_id: runId })).toHaveLength(1);
      expect(rig.backup.requests({ run_id: runId })).toHaveLength(1);
      expect(await pinOf(sessionId)).toBe('backup');
      // One usage record per attempt: the refused one estimated (nothing generated), the served one reported.
      expect(attempts).toMatchObject([
        { index: 0, provider: 'primary', outcome: 'failed', errorKind: 'http', status, outputStarted: false },
        { index: 1, provider: 'backup', outcome: 'ok' },
      ]);
      expect(attempts[0]!.usage).toEqual({
        prompt_tokens: 0,
        completion_tokens: 0,
        total_tokens: 0,
        usage_source: 'estimate',
      });
      expect(attempts[1]!.usage.usage_source).toBe('provider');
      expect(attempts[1]!.usage.completion_tokens).toBeGreaterThan(0);
      expect(result!.attempts).toEqual(attempts);
    },
  );

  it('primary silent past the first-token timeout: the backup serves the call', async () => {
    const runId = 'fo-ttft';
    rig.primary.addScript({ match: { run_id: runId }, responses: [{ text: '来得太迟', ttft_ms: 10_000 }] });
    rig.backup.addScript({ match: { run_id: runId }, responses: [{ text: '及时的回答' }] });

    const { text, attempts, result } = await call(rig.client({ timeouts: { firstTokenMs: 300 } }), {
      runId,
      sessionId: 'session-ttft',
    });

    expect(text).toBe('及时的回答');
    expect(result).toMatchObject({ provider: 'backup', failovers: 1 });
    expect(attempts[0]).toMatchObject({ provider: 'primary', errorKind: 'timeout', outputStarted: false });
    // The provider accepted the request and may bill the prompt: it is estimated, not zero.
    expect(attempts[0]!.usage.usage_source).toBe('estimate');
    expect(attempts[0]!.usage.prompt_tokens).toBeGreaterThan(0);
    expect(await pinOf('session-ttft')).toBe('backup');
  });

  it('primary not answering with headers past the connect timeout: the backup serves the call', async () => {
    const runId = 'fo-connect';
    rig.primary.addScript({
      match: { run_id: runId },
      responses: [{ error: { status: 500 }, ttft_ms: 10_000 }],
    });
    rig.backup.addScript({ match: { run_id: runId }, responses: [{ text: '连上了' }] });
    const { text, attempts } = await call(rig.client({ timeouts: { connectMs: 300 } }), { runId });
    expect(text).toBe('连上了');
    expect(attempts[0]).toMatchObject({ provider: 'primary', errorKind: 'timeout' });
  });

  it('a pinned session goes straight to its provider while the pin lives', async () => {
    const sessionId = 'session-pinned';
    rig.primary.addScript({ match: { run_id: 'pin-1' }, responses: [{ error: { status: 503 } }] });
    await call(rig.client(), { runId: 'pin-1', sessionId });
    expect(await pinOf(sessionId)).toBe('backup');

    // The primary is healthy again, but the session stays where its conversation is.
    const { result } = await call(rig.client(), { runId: 'pin-2', sessionId });
    expect(result).toMatchObject({ provider: 'backup', failovers: 0 });
    expect(rig.primary.requests({ run_id: 'pin-2' })).toHaveLength(0);

    // And if its pinned provider fails first, the call moves back to the primary.
    rig.backup.addScript({ match: { run_id: 'pin-3' }, responses: [{ error: { status: 502 } }] });
    const moved = await call(rig.client(), { runId: 'pin-3', sessionId });
    expect(moved.result).toMatchObject({ provider: 'primary', failovers: 1 });
    expect(await pinOf(sessionId)).toBe('primary');
  });

  it('a call handed the admission read ahead opens where that read said, not where the pin says now', async () => {
    const sessionId = 'session-read-ahead';
    await rig.redis.set(rig.keys.llmPin(sessionId), 'backup', 'PX', 60_000);
    const client = rig.client();
    const admission = client.readAdmission!(sessionId);
    expect(await admission).toEqual({ provider: 'backup', admission: 'closed' });
    // The pin moves after the read: only a call that reads again would see it.
    await rig.redis.set(rig.keys.llmPin(sessionId), 'primary', 'PX', 60_000);
    const ahead = await call(client, { runId: 'ahead-1', sessionId, admission });
    expect(ahead.result).toMatchObject({ provider: 'backup', failovers: 0 });
    expect(rig.primary.requests({ run_id: 'ahead-1' })).toHaveLength(0);
    // Without one, the call reads the pin itself (the served call pinned the session to the backup).
    await rig.redis.set(rig.keys.llmPin(sessionId), 'primary', 'PX', 60_000);
    const read = await call(client, { runId: 'ahead-2', sessionId });
    expect(read.result).toMatchObject({ provider: 'primary', failovers: 0 });
    expect(rig.backup.requests({ run_id: 'ahead-2' })).toHaveLength(0);
  });

  it('with Redis unreachable a session call goes on: configured order, breakers taken as closed', async () => {
    // A client whose every Redis command fails (nothing listens there, no retry per command).
    const closed = await closedPort();
    const deadRedis = createRedis(`redis://127.0.0.1:${closed}`, {
      maxRetriesPerRequest: 0,
      onError: () => undefined,
    });
    try {
      const client = rig.client({ redis: deadRedis, breaker: { failureThreshold: 1 } });
      const served = await call(client, { runId: 'redis-down-1', sessionId: 'session-redis-down' });
      expect(served.result).toMatchObject({ provider: 'primary', failovers: 0 });
      // Failover still works without the shared breaker.
      rig.primary.addScript({ match: { run_id: 'redis-down-2' }, responses: [{ error: { status: 503 } }] });
      const moved = await call(client, { runId: 'redis-down-2', sessionId: 'session-redis-down' });
      expect(moved.result).toMatchObject({ provider: 'backup', failovers: 1 });
    } finally {
      deadRedis.disconnect();
    }
  });

  it('a request error (400) is not a provider failure: no switch, the error surfaces', async () => {
    const runId = 'fo-400';
    rig.primary.addScript({ match: { run_id: runId }, responses: [{ error: { status: 400 } }] });
    const { error, attempts } = await call(rig.client(), { runId });
    expect(error).toBeInstanceOf(LlmCallError);
    expect(error).toMatchObject({ kind: 'http', status: 400 });
    expect(rig.backup.requests({ run_id: runId })).toHaveLength(0);
    expect(attempts).toHaveLength(1);
  });

  it('role model overrides pick the model per role, each with its declared window', async () => {
    const [primary, backup] = rig.providers;
    const client = rig.client({
      providers: [
        { ...primary!, roleModels: { router: { model: 'cheap-router', maxInputTokens: 16_000 } } },
        backup!,
      ],
    });
    const { result } = await call(client, { runId: 'fo-role', role: 'router' });
    expect(result?.model).toBe('cheap-router');
    const [request] = rig.primary.requests({ run_id: 'fo-role' });
    expect((request!.body as { model: string }).model).toBe('cheap-router');
  });
});

describe('no failover after output started', () => {
  it('primary dying mid-stream after text: no switch, the error surfaces with outputStarted', async () => {
    const runId = 'fo-mid';
    const sessionId = 'session-mid';
    rig.primary.addScript({
      match: { run_id: runId },
      responses: [{ text: '雨夜里的旧书店'.repeat(20), disconnect_after_chars: 12 }],
    });
    const { text, error, attempts } = await call(rig.client(), { runId, sessionId });

    expect(text.length).toBeGreaterThanOrEqual(12);
    expect(error).toBeInstanceOf(LlmCallError);
    expect(error).toMatchObject({ provider: 'primary', kind: 'stream_interrupted', outputStarted: true });
    expect(rig.backup.requests({ run_id: runId })).toHaveLength(0);
    expect(await pinOf(sessionId)).toBeNull();
    // The failed attempt still gets its usage record: what streamed is estimated.
    expect(attempts).toHaveLength(1);
    expect(attempts[0]).toMatchObject({ provider: 'primary', outcome: 'failed', outputStarted: true });
    expect(attempts[0]!.usage.usage_source).toBe('estimate');
    expect(attempts[0]!.usage.completion_tokens).toBeGreaterThan(0);
  });

  it('switches at most once: when the backup fails too, its error surfaces', async () => {
    const runId = 'fo-both';
    rig.primary.addScript({ match: { run_id: runId }, responses: [{ error: { status: 500 } }] });
    rig.backup.addScript({ match: { run_id: runId }, responses: [{ error: { status: 503 } }] });
    const { error, attempts } = await call(rig.client(), { runId });
    expect(error).toMatchObject({ provider: 'backup', kind: 'http', status: 503 });
    expect(attempts.map((attempt) => attempt.provider)).toEqual(['primary', 'backup']);
    expect(rig.primary.requests({ run_id: runId })).toHaveLength(1);
  });
});
