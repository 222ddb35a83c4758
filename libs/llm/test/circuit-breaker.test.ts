import { createRedis, type RedisClient } from '@quill/redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testUrls } from '../../../test/support/urls.ts';
import { createCircuitBreaker } from '../src/circuit-breaker.ts';
import { LlmCallError, quillErrorCodeFor, readBreakerStates } from '../src/index.ts';
import { call, eventually, type FailoverRig, startRig } from './failover-helpers.ts';

let rig: FailoverRig;
let otherReplicaRedis: RedisClient;

beforeAll(async () => {
  rig = await startRig();
  otherReplicaRedis = createRedis(testUrls.redis);
});
afterAll(async () => {
  await otherReplicaRedis?.quit();
  await rig?.close();
});

const states = () => readBreakerStates(rig.redis, rig.keys, ['primary', 'backup']);
const failPrimary = (runId: string) =>
  rig.primary.addScript({ match: { run_id: runId }, responses: [{ error: { status: 500 } }] });

describe('circuit breaker shared through Redis', () => {
  it('opens after N failures; another replica then goes straight to the backup; half-open recovery returns to the primary', async () => {
    const breaker = { failureThreshold: 3, cooldownMs: 1_000 };
    const replicaA = rig.client({ breaker });
    for (const runId of ['cb-1', 'cb-2', 'cb-3']) {
      failPrimary(runId);
      const { result } = await call(replicaA, { runId });
      expect(result?.provider).toBe('backup');
    }
    expect((await states()).primary.state).toBe('open');
    expect((await states()).backup.state).toBe('closed');

    // Another replica: its own client and Redis connection, the same keys.
    const replicaB = rig.client({ redis: otherReplicaRedis, breaker });
    const skipped = await call(replicaB, { runId: 'cb-4' });
    expect(skipped.result).toMatchObject({ provider: 'backup', failovers: 1 });
    expect(rig.primary.requests({ run_id: 'cb-4' })).toHaveLength(0);
    // No request was sent to the open provider, so no attempt (and no usage record) for it.
    expect(skipped.attempts.map((attempt) => attempt.provider)).toEqual(['backup']);

    // After the cooldown one call probes the primary; its success closes the breaker for everyone.
    expect(await eventually(async () => (await states()).primary.state === 'half_open')).toBe(true);
    const probe = await call(replicaB, { runId: 'cb-5' });
    expect(probe.result).toMatchObject({ provider: 'primary', failovers: 0 });
    // Written after the reply (a hint, not on the way to it), on the other replica's connection.
    expect(await eventually(async () => (await states()).primary.state === 'closed')).toBe(true);
    const after = await call(replicaA, { runId: 'cb-6' });
    expect(after.result?.provider).toBe('primary');
  });

  it('a failed half-open probe reopens the breaker and the call is served by the backup', async () => {
    const breaker = { failureThreshold: 1, cooldownMs: 500 };
    const client = rig.client({ breaker });
    failPrimary('cb-reopen-1');
    await call(client, { runId: 'cb-reopen-1' });
    expect((await states()).primary.state).toBe('open');
    expect(await eventually(async () => (await states()).primary.state === 'half_open')).toBe(true);

    failPrimary('cb-reopen-2');
    const probe = await call(client, { runId: 'cb-reopen-2' });
    expect(probe.result?.provider).toBe('backup');
    expect(rig.primary.requests({ run_id: 'cb-reopen-2' })).toHaveLength(1);
    expect((await states()).primary.state).toBe('open');
    // Leave the primary healthy for the next test.
    expect(await eventually(async () => (await states()).primary.state === 'half_open')).toBe(true);
    await call(client, { runId: 'cb-reopen-3' });
    expect((await states()).primary.state).toBe('closed');
  });

  it('with every breaker open the call fails fast as model_unavailable, sending nothing', async () => {
    const single = rig.client({ providers: [rig.providers[0]!], breaker: { failureThreshold: 1 } });
    failPrimary('cb-single-1');
    await call(single, { runId: 'cb-single-1' });
    const { error, attempts } = await call(single, { runId: 'cb-single-2' });
    expect(error).toBeInstanceOf(LlmCallError);
    expect(error).toMatchObject({ kind: 'circuit_open', outputStarted: false });
    expect(quillErrorCodeFor(error as LlmCallError)).toBe('model_unavailable');
    expect(rig.primary.requests({ run_id: 'cb-single-2' })).toHaveLength(0);
    expect(attempts).toHaveLength(0);
    await rig.redis.del(rig.keys.llmBreaker('primary'));
  });
});

describe('breaker state machine', () => {
  const settings = { failureThreshold: 3, windowMs: 60_000, cooldownMs: 60_000, probeLeaseMs: 60_000 };

  it('does not open while failures are fewer than the successes in the window', async () => {
    const breaker = createCircuitBreaker(rig.redis, rig.keys, settings);
    for (let index = 0; index < 5; index++) await breaker.recordSuccess('ratio');
    for (let index = 0; index < 4; index++) expect(await breaker.recordFailure('ratio')).toBe('closed');
    expect(await breaker.recordFailure('ratio')).toBe('open');
    expect(await breaker.admit('ratio')).toBe('open');
  });

  it('lets exactly one probe through when half-open, across replicas', async () => {
    const shortCooldown = { ...settings, failureThreshold: 1, cooldownMs: 200 };
    const replicaA = createCircuitBreaker(rig.redis, rig.keys, shortCooldown);
    const replicaB = createCircuitBreaker(otherReplicaRedis, rig.keys, shortCooldown);
    expect(await replicaA.recordFailure('probe')).toBe('open');
    expect(
      await eventually(
        async () => (await readBreakerStates(rig.redis, rig.keys, ['probe'])).probe.state === 'half_open',
      ),
    ).toBe(true);
    const admissions = await Promise.all([
      replicaA.admit('probe'),
      replicaB.admit('probe'),
      replicaA.admit('probe'),
    ]);
    expect(admissions.filter((admission) => admission === 'probe')).toHaveLength(1);
    expect(admissions.filter((admission) => admission === 'open')).toHaveLength(2);
    expect(await replicaB.recordSuccess('probe')).toBe('closed');
    expect(await replicaA.admit('probe')).toBe('closed');
  });

  it('admits a session call on its pinned provider, else the first configured, in one script', async () => {
    const breaker = createCircuitBreaker(rig.redis, rig.keys, { ...settings, failureThreshold: 1 });
    const providers = ['first-a', 'second-a'];
    // No pin: the first configured provider, closed.
    expect(await breaker.admitFirst('session-unpinned', providers)).toEqual({
      provider: 'first-a',
      admission: 'closed',
    });
    // A pin naming a configured provider: that one, with its own breaker's admission.
    await rig.redis.set(rig.keys.llmPin('session-pinned-a'), 'second-a');
    expect(await breaker.recordFailure('second-a')).toBe('open');
    expect(await breaker.admitFirst('session-pinned-a', providers)).toEqual({
      provider: 'second-a',
      admission: 'open',
    });
    expect(await breaker.recordFailure('first-a')).toBe('open');
    // A pin naming a provider this client does not have: the configured order.
    await rig.redis.set(rig.keys.llmPin('session-pinned-elsewhere'), 'retired');
    expect(await breaker.admitFirst('session-pinned-elsewhere', providers)).toEqual({
      provider: 'first-a',
      admission: 'open',
    });
  });

  it('spends the half-open probe of the pinned provider only', async () => {
    const shortCooldown = { ...settings, failureThreshold: 1, cooldownMs: 200 };
    const breaker = createCircuitBreaker(rig.redis, rig.keys, shortCooldown);
    const providers = ['first-b', 'second-b'];
    expect(await breaker.recordFailure('first-b')).toBe('open');
    expect(await breaker.recordFailure('second-b')).toBe('open');
    await rig.redis.set(rig.keys.llmPin('session-probing'), 'second-b');
    expect(
      await eventually(async () => {
        const states = await readBreakerStates(rig.redis, rig.keys, providers);
        return states['first-b']?.state === 'half_open' && states['second-b']?.state === 'half_open';
      }),
    ).toBe(true);
    expect(await breaker.admitFirst('session-probing', providers)).toEqual({
      provider: 'second-b',
      admission: 'probe',
    });
    // The other provider's probe is still there for whoever calls it first.
    expect(await breaker.admit('first-b')).toBe('probe');
    expect(await breaker.admit('second-b')).toBe('open');
  });
});
