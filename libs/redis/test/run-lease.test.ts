import { afterAll, describe, expect, it } from 'vitest';
import { testUrls } from '../../../test/support/urls.ts';
import {
  claimExpiredRunLeases,
  createRedis,
  holdRunLease,
  releaseRunLease,
  renewRunLeases,
} from '../src/index.ts';
import { RUN_LEASE_RENEWAL_BATCH } from '../src/run-lease.ts';
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
    expect(await renewRunLeases(redis, keys, ['run-lapsed'], 60_000)).toEqual(['run-lapsed']);
    expect(await claimExpiredRunLeases(redis, keys)).toEqual([]);
    expect(await redis.zscore(keys.leases, 'run-lapsed')).toBeNull();
  });

  it('keeps a renewed lease and forgets a released one', async () => {
    await holdRunLease(redis, keys, 'run-renewed', 'ack-renewed', 150);
    await sleep(300);
    // Lapsed but not yet claimed: the renewal pushes the expiry out again.
    expect(await renewRunLeases(redis, keys, ['run-renewed'], 60_000)).toEqual([]);
    expect(await claimExpiredRunLeases(redis, keys)).toEqual([]);

    await releaseRunLease(redis, keys, 'run-renewed');
    expect(await redis.zscore(keys.leases, 'run-renewed')).toBeNull();
    expect(await redis.hget(keys.acks, 'run-renewed')).toBeNull();
  });

  it('renews many leases in batches and names exactly the ones a peer took', async () => {
    const runIds = Array.from({ length: RUN_LEASE_RENEWAL_BATCH * 2 + 7 }, (_, index) => `run-many-${index}`);
    for (const runId of runIds) await holdRunLease(redis, keys, runId, `ack-${runId}`, 150);
    // Three lapse and are claimed by a peer (one in each batch); the rest lapse unclaimed.
    const taken = [runIds[3]!, runIds[RUN_LEASE_RENEWAL_BATCH + 1]!, runIds.at(-1)!];
    await redis.zrem(keys.leases, ...taken);
    await sleep(300);

    const lost = await renewRunLeases(redis, keys, runIds, 60_000);
    expect(lost).toEqual(taken);
    // Every other lease now runs a minute ahead: none is claimable, none was added back.
    expect(await claimExpiredRunLeases(redis, keys, 5_000)).toEqual([]);
    const scores = await redis.zmscore(keys.leases, ...runIds);
    expect(scores.filter((score) => score !== null)).toHaveLength(runIds.length - taken.length);
    expect(taken.map((runId) => scores[runIds.indexOf(runId)])).toEqual([null, null, null]);
    await redis.zrem(keys.leases, ...runIds);
    await redis.hdel(keys.acks, ...runIds);
  });
});
