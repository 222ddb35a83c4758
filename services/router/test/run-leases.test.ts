import { Writable } from 'node:stream';
import type { Bus } from '@quill/bus';
import { createRedis, holdRunLease, redisKeys } from '@quill/redis';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeTestBus, openTestBus } from '../../../test/support/test-bus.ts';
import { testUrls, uniqueName } from '../../../test/support/urls.ts';
import { createRunLeases, type RunLeases } from '../src/run-leases.ts';

const redis = createRedis(testUrls.redis);
const keys = redisKeys(uniqueName('quill_test_'));
const leaseKeys = { leases: keys.runLeases, acks: keys.runLeaseAcks };
const warnings: string[] = [];
const logger = pino(
  { level: 'warn' },
  new Writable({
    write(chunk, _encoding, done) {
      warnings.push(String(JSON.parse(String(chunk)).msg));
      done();
    },
  }),
);
let bus: Bus;
let leases: RunLeases;

beforeAll(async () => {
  bus = await openTestBus('r', 'run-leases');
  // A short lease: renewed every 200 ms; the scan (claiming lapsed leases) is left to the test.
  leases = createRunLeases({ bus, redis, keys, logger }, { ttlMs: 600, scanMs: 3_600_000 });
});
afterAll(async () => {
  leases.stop();
  await closeTestBus(bus);
  const found = await redis.keys(`${keys.prefix}*`);
  if (found.length) await redis.del(...found);
  await redis.quit();
});

const expiry = async (runId: string) => {
  const score = await redis.zscore(leaseKeys.leases, runId);
  return score === null ? null : Number(score);
};
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** Polls until `check` holds; the bound is far above any machine's pause, not a timing claim. */
async function eventually(check: () => Promise<boolean>, what: string): Promise<void> {
  for (const started = Date.now(); !(await check()); await sleep(50)) {
    if (Date.now() - started > 30_000) throw new Error(`never: ${what}`);
  }
}

describe('router run leases', () => {
  it('renews every lease the process holds in one call: all of them move to the same expiry', async () => {
    const runIds = ['run-a', 'run-b', 'run-c'];
    const holds = await Promise.all(runIds.map((runId) => leases.hold(runId, `ack-${runId}`, logger)));
    const first = await Promise.all(runIds.map(expiry));
    await eventually(async () => {
      const now = await Promise.all(runIds.map(expiry));
      return now.every((value, index) => value !== null && value > first[index]!) && new Set(now).size === 1;
    }, 'one renewal carried all three leases');

    await Promise.all(holds.map((hold) => hold.release()));
    expect(await Promise.all(runIds.map(expiry))).toEqual([null, null, null]);
    expect(await redis.hlen(leaseKeys.acks)).toBe(0);
  });

  it('stops renewing a lease a peer took, and its late release leaves the peer’s lease alone', async () => {
    const hold = await leases.hold('run-taken', 'ack-mine', logger);
    // A peer found it lapsed, claimed it (removed) and took the run over under its own lease.
    await redis.zrem(leaseKeys.leases, 'run-taken');
    await eventually(
      async () => warnings.includes('run lease lost to a peer; the run is being taken over'),
      'the loss is seen',
    );
    await holdRunLease(redis, leaseKeys, 'run-taken', 'ack-peer', 60_000);

    await hold.release();
    expect(await expiry('run-taken')).not.toBeNull();
    expect(await redis.hget(leaseKeys.acks, 'run-taken')).toBe('ack-peer');
    await redis.zrem(leaseKeys.leases, 'run-taken');
    await redis.hdel(leaseKeys.acks, 'run-taken');
  });

  it('keeps renewing a run that came back to this process while its lost handler was finishing', async () => {
    const lostHandler = await leases.hold('run-back', 'ack-1', logger);
    const lossesBefore = warnings.length;
    await redis.zrem(leaseKeys.leases, 'run-back');
    await eventually(async () => warnings.length > lossesBefore, 'the loss is seen');

    const newHandler = await leases.hold('run-back', 'ack-2', logger);
    await lostHandler.release();
    const held = await expiry('run-back');
    expect(held).not.toBeNull();
    await eventually(async () => ((await expiry('run-back')) ?? 0) > held!, 'the new hold is renewed');
    expect(await redis.hget(leaseKeys.acks, 'run-back')).toBe('ack-2');

    await newHandler.release();
    expect(await expiry('run-back')).toBeNull();
  });
});
