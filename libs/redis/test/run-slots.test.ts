import { afterAll, describe, expect, it } from 'vitest';
import { testUrls } from '../../../test/support/urls.ts';
import { acquireRunSlots, countSemaphore, createRedis, getSessionLockHolder } from '../src/index.ts';
import { deleteKeys, testKeys } from './helpers.ts';

const redis = createRedis(testUrls.redis);
const keys = testKeys();
afterAll(async () => {
  await deleteKeys(redis, keys);
  await redis.quit();
});

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
});
