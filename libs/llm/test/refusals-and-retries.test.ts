import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LlmCallError, quillErrorCodeFor, readBreakerStates } from '../src/index.ts';
import { call, type FailoverRig, startRig } from './failover-helpers.ts';

let rig: FailoverRig;

beforeAll(async () => {
  rig = await startRig();
});
afterAll(async () => {
  await rig?.close();
});

const primaryOnly = () => [rig.providers[0]!];
const failuresOf = async (provider: 'primary' | 'backup') =>
  (await readBreakerStates(rig.redis, rig.keys, [provider]))[provider].failures;

describe('a provider refusing the key (401, 402, 403)', () => {
  it.each([401, 402, 403])(
    'primary answering %i: the backup serves the call and the refusal counts against the primary',
    async (status) => {
      const runId = `refused-${status}`;
      const before = await failuresOf('primary');
      rig.primary.addScript({ match: { run_id: runId }, responses: [{ error: { status } }] });
      rig.backup.addScript({ match: { run_id: runId }, responses: [{ text: '备用供应商接手' }] });

      const { text, attempts, result } = await call(rig.client(), { runId, sessionId: `s-${runId}` });

      expect(text).toBe('备用供应商接手');
      expect(result).toMatchObject({ provider: 'backup', failovers: 1 });
      expect(attempts).toMatchObject([
        { provider: 'primary', outcome: 'failed', errorKind: 'http', status },
        { provider: 'backup', outcome: 'ok' },
      ]);
      expect(await failuresOf('primary')).toBe(before + 1);
    },
  );

  it('with no backup, a refusal is not retried on the same provider and reads as model_unavailable', async () => {
    const runId = 'refused-alone';
    rig.primary.addScript({ match: { run_id: runId }, responses: [{ error: { status: 401 } }] });

    const { error, attempts } = await call(rig.client({ providers: primaryOnly() }), { runId });

    expect(error).toBeInstanceOf(LlmCallError);
    expect(error).toMatchObject({ kind: 'http', status: 401 });
    expect(quillErrorCodeFor(error as LlmCallError)).toBe('model_unavailable');
    expect(rig.primary.requests({ run_id: runId })).toHaveLength(1);
    expect(attempts).toHaveLength(1);
  });

  it('a dead primary key opens its breaker, after which calls go straight to the backup', async () => {
    // A fresh breaker hash for this test: its provider name is its own.
    const providers = [
      { ...rig.providers[0]!, name: 'dead-key' },
      { ...rig.providers[1]!, name: 'healthy' },
    ];
    const breakerClient = rig.client({ providers, breaker: { failureThreshold: 2 } });
    for (const runId of ['dead-1', 'dead-2', 'dead-3']) {
      rig.primary.addScript({ match: { run_id: runId }, responses: [{ error: { status: 401 } }] });
      const { result } = await call(breakerClient, { runId });
      expect(result?.provider).toBe('healthy');
    }
    // The third call found the breaker open and never asked the dead key.
    expect(rig.primary.requests({ run_id: 'dead-3' })).toHaveLength(0);
    const states = await readBreakerStates(rig.redis, rig.keys, ['dead-key']);
    expect(states['dead-key'].state).toBe('open');
  });
});

describe('retrying the same provider', () => {
  it('waits the retry-after seconds of a 429 before asking again', async () => {
    const runId = 'retry-seconds';
    rig.primary.addScript({
      match: { run_id: runId },
      responses: [{ error: { status: 429, retry_after: 1 } }, { text: '限流过后的回答' }],
    });

    const { text, attempts } = await call(rig.client({ providers: primaryOnly() }), { runId });

    expect(text).toBe('限流过后的回答');
    const [first, second] = rig.primary.requests({ run_id: runId });
    expect(second!.received_at - first!.received_at).toBeGreaterThanOrEqual(1000);
    expect(attempts).toMatchObject([
      { index: 0, provider: 'primary', outcome: 'failed', status: 429 },
      { index: 1, provider: 'primary', outcome: 'ok' },
    ]);
  });

  it('honours the HTTP-date form and retry-after-ms', async () => {
    const until = new Date(Date.now() + 2000).toUTCString();
    rig.primary.addScript({
      match: { run_id: 'retry-date' },
      responses: [{ error: { status: 503, retry_after: until } }, { text: '好了' }],
    });
    rig.primary.addScript({
      match: { run_id: 'retry-ms' },
      responses: [{ error: { status: 429, retry_after_ms: 700, retry_after: 60 } }, { text: '好了' }],
    });
    const client = rig.client({ providers: primaryOnly() });

    expect((await call(client, { runId: 'retry-date' })).text).toBe('好了');
    expect(rig.primary.requests({ run_id: 'retry-date' })[1]!.received_at).toBeGreaterThanOrEqual(
      Date.parse(until),
    );
    // retry-after-ms wins over the 60 s of retry-after (which would be over the cap).
    expect((await call(client, { runId: 'retry-ms' })).text).toBe('好了');
    const [first, second] = rig.primary.requests({ run_id: 'retry-ms' });
    expect(second!.received_at - first!.received_at).toBeGreaterThanOrEqual(700);
  });

  it('a retry-after beyond the cap fails the call at once instead of holding the run', async () => {
    const runId = 'retry-too-long';
    rig.primary.addScript({
      match: { run_id: runId },
      responses: [{ error: { status: 429, retry_after: 120 } }, { text: '不该到这里' }],
    });

    const { error } = await call(
      rig.client({ providers: primaryOnly(), retry: { defaultMs: 0, capMs: 5_000 } }),
      {
        runId,
      },
    );

    expect(error).toMatchObject({ kind: 'http', status: 429, retryAfterMs: 120_000 });
    expect(rig.primary.requests({ run_id: runId })).toHaveLength(1);
  });

  it('asks the other provider at once, not after the wait, when there is one', async () => {
    const runId = 'retry-after-backup';
    rig.primary.addScript({
      match: { run_id: runId },
      responses: [{ error: { status: 429, retry_after: 3600 } }],
    });
    rig.backup.addScript({ match: { run_id: runId }, responses: [{ text: '备用' }] });

    const { text } = await call(rig.client(), { runId });

    expect(text).toBe('备用');
    const [refused] = rig.primary.requests({ run_id: runId });
    const [served] = rig.backup.requests({ run_id: runId });
    // Long before the hour the primary asked for (a wait would time the test out).
    expect(served!.received_at - refused!.received_at).toBeLessThan(3_600_000);
  });
});

describe('a connection reset during reasoning', () => {
  const reasoning = '先想一想这一章的结构：开头写雨，中段写书店，结尾留下悬念。'.repeat(3);

  it('is no output yet: the backup answers, and the attempts say reasoning had started', async () => {
    const runId = 'reset-reasoning';
    rig.primary.addScript({
      match: { run_id: runId },
      responses: [
        { reasoning, text: '不会出现', disconnect_after_reasoning_chars: 12, disconnect_how: 'reset' },
      ],
    });
    rig.backup.addScript({
      match: { run_id: runId },
      responses: [{ reasoning: '换一个思路。', text: '备用的正文。' }],
    });

    const { text, thinking, attempts, result } = await call(rig.client(), { runId });

    expect(text).toBe('备用的正文。');
    expect(result).toMatchObject({ provider: 'backup', thinking: '换一个思路。' });
    // The author saw the first attempt's reasoning, then the backup's.
    expect(thinking.endsWith('换一个思路。')).toBe(true);
    expect(thinking.length).toBeGreaterThan('换一个思路。'.length);
    expect(attempts[0]).toMatchObject({
      provider: 'primary',
      outcome: 'failed',
      errorKind: 'stream_interrupted',
      outputStarted: false,
    });
    // Streaming had begun, so the attempt's usage is estimated, not zero.
    expect(attempts[0]!.usage.completion_tokens).toBeGreaterThan(0);
  });

  it('with no backup, the same provider is asked once more', async () => {
    const runId = 'reset-reasoning-alone';
    rig.primary.addScript({
      match: { run_id: runId },
      responses: [
        { reasoning, disconnect_after_reasoning_chars: 5, disconnect_how: 'reset' },
        { reasoning: '重来。', text: '第二次成功。' },
      ],
    });

    const { text, attempts } = await call(
      rig.client({ providers: primaryOnly(), retry: { defaultMs: 0, capMs: 0 } }),
      {
        runId,
      },
    );

    expect(text).toBe('第二次成功。');
    expect(attempts.map((attempt) => [attempt.provider, attempt.outcome])).toEqual([
      ['primary', 'failed'],
      ['primary', 'ok'],
    ]);
  });

  it('after text, a reset still surfaces: the author has seen part of the answer', async () => {
    const runId = 'reset-after-text';
    rig.primary.addScript({
      match: { run_id: runId },
      responses: [
        {
          reasoning: '想好了。',
          text: '雨夜，旧书店。'.repeat(5),
          disconnect_after_chars: 4,
          disconnect_how: 'reset',
        },
      ],
    });

    const { error } = await call(
      rig.client({ providers: primaryOnly(), retry: { defaultMs: 0, capMs: 0 } }),
      {
        runId,
      },
    );

    expect(error).toMatchObject({ kind: 'stream_interrupted', outputStarted: true, reasoningStarted: true });
    expect(rig.primary.requests({ run_id: runId })).toHaveLength(1);
  });
});

describe('usage rows', () => {
  it('name the configured model for failed and served attempts alike', async () => {
    const runId = 'model-names';
    rig.primary.addScript({ match: { run_id: runId }, responses: [{ error: { status: 500 } }] });
    rig.backup.addScript({
      match: { run_id: runId },
      responses: [{ text: '好', response_model: 'quill-fake-backup-2026-01-01' }],
    });

    const { attempts, result } = await call(rig.client(), { runId });

    expect(attempts.map((attempt) => attempt.model)).toEqual(['quill-fake-1', 'quill-fake-backup']);
    // The dated variant the provider answered with stays on the result (traces).
    expect(result?.model).toBe('quill-fake-backup-2026-01-01');
  });
});
