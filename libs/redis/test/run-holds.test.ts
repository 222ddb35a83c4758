import { describe, expect, it } from 'vitest';
import {
  acquireSemaphore,
  acquireSessionLock,
  countSemaphore,
  getSessionLockHolder,
  type RunHold,
  renewRunHolds,
} from '../src/index.ts';
import { RUN_HOLD_RENEWAL_BATCH } from '../src/run-holds.ts';
import { eventually, testRedis } from './helpers.ts';

const { redis, keys } = testRedis();

const holdOf = (runId: string, sessionId: string, userId: string): RunHold => ({
  runId,
  sessionLockKey: keys.sessionLock(sessionId),
  semaphoreKey: keys.userSemaphore(userId),
});
/** What a launch takes for a run: the session's lock and one of the user's slots. */
async function launch(hold: RunHold, ttlMs: number): Promise<void> {
  expect(await acquireSessionLock(redis, hold.sessionLockKey, hold.runId, ttlMs)).toBe(true);
  expect(await acquireSemaphore(redis, hold.semaphoreKey, hold.runId, 1_000, ttlMs)).toBe(true);
}
const slotExpiry = async (hold: RunHold) => Number(await redis.zscore(hold.semaphoreKey, hold.runId));

describe('run holds renewed together', () => {
  it('extends the lock and the slot of each run it is given', async () => {
    const a = holdOf('run-a', 's-a', 'u-1');
    const b = holdOf('run-b', 's-b', 'u-1');
    await launch(a, 5_000);
    await launch(b, 5_000);
    const before = await slotExpiry(a);

    expect(await renewRunHolds(redis, [a, b], 60_000)).toEqual([]);
    for (const hold of [a, b]) {
      expect(await redis.pttl(hold.sessionLockKey)).toBeGreaterThan(5_000);
      expect(await slotExpiry(hold)).toBeGreaterThan(before + 50_000);
    }
    // The semaphore's own TTL follows its latest member, so an abandoned one disappears.
    expect(await redis.pttl(a.semaphoreKey)).toBeGreaterThan(5_000);
    expect(await countSemaphore(redis, a.semaphoreKey)).toBe(2);
  });

  it('does not extend a lock another run holds, and says the run lost it', async () => {
    const mine = holdOf('run-mine', 's-shared', 'u-2');
    expect(await acquireSessionLock(redis, mine.sessionLockKey, 'run-successor', 5_000)).toBe(true);
    expect(await acquireSemaphore(redis, mine.semaphoreKey, mine.runId, 10, 5_000)).toBe(true);

    expect(await renewRunHolds(redis, [mine], 60_000)).toEqual(['run-mine']);
    expect(await getSessionLockHolder(redis, mine.sessionLockKey)).toBe('run-successor');
    expect(await redis.pttl(mine.sessionLockKey)).toBeLessThanOrEqual(5_000);
  });

  it('does not bring back a slot that expired: the next run may have it', async () => {
    const crashed = holdOf('run-crashed', 's-c', 'u-3');
    await launch(crashed, 100);
    expect(await eventually(async () => (await countSemaphore(redis, crashed.semaphoreKey)) === 0)).toBe(
      true,
    );

    expect(await renewRunHolds(redis, [crashed], 60_000)).toEqual(['run-crashed']);
    expect(await redis.zscore(crashed.semaphoreKey, crashed.runId)).toBeNull();
    expect(await acquireSemaphore(redis, crashed.semaphoreKey, 'run-next', 1, 30_000)).toBe(true);
  });

  it('renews more runs than one call carries, all of them', async () => {
    const holds = Array.from({ length: RUN_HOLD_RENEWAL_BATCH * 2 + 7 }, (_, index) =>
      holdOf(`run-many-${index}`, `s-many-${index}`, `u-many-${index % 3}`),
    );
    for (const hold of holds) await launch(hold, 5_000);
    // One run of the middle batch ended meanwhile: its lock and slot were released.
    const ended = holds[RUN_HOLD_RENEWAL_BATCH + 1]!;
    await redis.del(ended.sessionLockKey);
    await redis.zrem(ended.semaphoreKey, ended.runId);

    expect(await renewRunHolds(redis, holds, 60_000)).toEqual([ended.runId]);
    const locks = await Promise.all(holds.map((hold) => redis.pttl(hold.sessionLockKey)));
    expect(locks.filter((ttl) => ttl > 5_000)).toHaveLength(holds.length - 1);
    const slots = await Promise.all(holds.map(slotExpiry));
    const soon = Date.now() + 10_000;
    expect(slots.filter((expiry) => expiry > soon)).toHaveLength(holds.length - 1);
  });
});
