import { describe, expect, it } from 'vitest';
import { acquireRunSlots, countSemaphore, getSessionLockHolder, releaseRunSlots } from '../src/index.ts';
import { testRedis } from './helpers.ts';

const { redis, keys } = testRedis();

const slotsOf = (session: string, user: string) => ({
  sessionLock: keys.sessionLock(session),
  userSemaphore: keys.userSemaphore(user),
});

describe('a launch’s session lock and semaphore slot', () => {
  it('takes both, or neither: a busy session takes no slot, a full semaphore keeps no lock', async () => {
    expect(await acquireRunSlots(redis, slotsOf('s1', 'u1'), 'run-1', 2, 30_000)).toBe('ok');
    expect(await getSessionLockHolder(redis, keys.sessionLock('s1'))).toBe('run-1');
    expect(await countSemaphore(redis, keys.userSemaphore('u1'))).toBe(1);
    expect(await redis.pttl(keys.sessionLock('s1'))).toBeGreaterThan(0);

    expect(await acquireRunSlots(redis, slotsOf('s1', 'u1'), 'run-2', 2, 30_000)).toBe('session_busy');
    expect(await getSessionLockHolder(redis, keys.sessionLock('s1'))).toBe('run-1');
    expect(await countSemaphore(redis, keys.userSemaphore('u1'))).toBe(1);

    expect(await acquireRunSlots(redis, slotsOf('s2', 'u1'), 'run-3', 2, 30_000)).toBe('ok');
    expect(await acquireRunSlots(redis, slotsOf('s3', 'u1'), 'run-4', 2, 30_000)).toBe(
      'too_many_active_runs',
    );
    expect(await getSessionLockHolder(redis, keys.sessionLock('s3'))).toBeNull();
    expect(await countSemaphore(redis, keys.userSemaphore('u1'))).toBe(2);
  });

  it('gives both back in one call, and leaves a lock the run no longer holds to its holder', async () => {
    expect(await acquireRunSlots(redis, slotsOf('s10', 'u10'), 'run-10', 3, 30_000)).toBe('ok');
    expect(await acquireRunSlots(redis, slotsOf('s11', 'u10'), 'run-11', 3, 30_000)).toBe('ok');
    await releaseRunSlots(redis, slotsOf('s10', 'u10'), 'run-10');
    expect(await getSessionLockHolder(redis, keys.sessionLock('s10'))).toBeNull();
    expect(await redis.zscore(keys.userSemaphore('u10'), 'run-10')).toBeNull();
    expect(await countSemaphore(redis, keys.userSemaphore('u10'))).toBe(1);

    // run-11's lock lapsed and the session's next run took it: run-11's end frees only its slot.
    await redis.set(keys.sessionLock('s11'), 'run-12', 'PX', 30_000);
    await releaseRunSlots(redis, slotsOf('s11', 'u10'), 'run-11');
    expect(await getSessionLockHolder(redis, keys.sessionLock('s11'))).toBe('run-12');
    expect(await countSemaphore(redis, keys.userSemaphore('u10'))).toBe(0);
  });
});
