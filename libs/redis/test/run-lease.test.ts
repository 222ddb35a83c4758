import { afterAll, describe, expect, it } from 'vitest';
import { testUrls } from '../../../test/support/urls.ts';
import {
  claimExpiredRunLeases,
  createRedis,
  holdRunLease,
  releaseRunLease,
  renewRunLease,
} from '../src/index.ts';
import { testKeys } from './helpers.ts';

const redis = createRedis(testUrls.redis);
const redisKeys = testKeys();
const keys = { leases: redisKeys.runLeases, acks: redisKeys.runLeaseAcks };
afterAll(async () => {
  await redis.del(keys.leases, keys.acks);
  await redis.quit();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('router run leases', () => {
  it('hands a lapsed lease to exactly one of the peers that look for it, with its ack subject', async () => {
    await holdRunLease(redis, keys, 'run-lapsed', '$JS.ACK.RUNS.router.1.7.7.0.0', 150);
    await holdRunLease(redis, keys, 'run-alive', '$JS.ACK.RUNS.router.1.8.8.0.0', 60_000);
    expect(await claimExpiredRunLeases(redis, keys)).toEqual([]);
    await sleep(300);

    const peers = await Promise.all(Array.from({ length: 5 }, () => claimExpiredRunLeases(redis, keys)));
    expect(peers.flat()).toEqual([{ runId: 'run-lapsed', ackSubject: '$JS.ACK.RUNS.router.1.7.7.0.0' }]);
    // Its late owner learns it lost the run and cannot renew it back into the set.
    expect(await renewRunLease(redis, keys, 'run-lapsed', 60_000)).toBe(false);
    expect(await claimExpiredRunLeases(redis, keys)).toEqual([]);
    expect(await redis.zscore(keys.leases, 'run-lapsed')).toBeNull();
  });

  it('keeps a renewed lease and forgets a released one', async () => {
    await holdRunLease(redis, keys, 'run-renewed', 'ack-renewed', 150);
    await sleep(300);
    // Lapsed but not yet claimed: the renewal pushes the expiry out again.
    expect(await renewRunLease(redis, keys, 'run-renewed', 60_000)).toBe(true);
    expect(await claimExpiredRunLeases(redis, keys)).toEqual([]);

    await releaseRunLease(redis, keys, 'run-renewed');
    expect(await redis.zscore(keys.leases, 'run-renewed')).toBeNull();
    expect(await redis.hget(keys.acks, 'run-renewed')).toBeNull();
  });
});
