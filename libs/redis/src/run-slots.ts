import type { Redis } from 'ioredis';
import { defineLuaScript } from './lua-script.ts';
import { SEMAPHORE_ADMITS, SEMAPHORE_PRELUDE } from './semaphore.ts';

// KEYS[1] the user's semaphore, KEYS[2] the session lock; the run id is the lock's token and the
// semaphore's member. Both or neither: a launch refused a slot does not keep the lock.
const acquireScript = defineLuaScript(`${SEMAPHORE_PRELUDE}${SEMAPHORE_ADMITS}
local run, limit, ttl = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
if not redis.call('SET', KEYS[2], run, 'PX', ttl, 'NX') then return 'session_busy' end
if not admits(run, limit) then
  redis.call('DEL', KEYS[2])
  return 'too_many_active_runs'
end
take(run, ttl)
return 'ok'`);

export type RunSlots = 'ok' | 'session_busy' | 'too_many_active_runs';

/**
 * A launch's session lock (session-lock.ts) and a slot of its user's semaphore (semaphore.ts) in
 * one round trip, atomically: `ok` holds both for ttlMs, otherwise neither was taken. The two keys
 * are on the one Redis of `REDIS_URL` (a cluster would need them in one hash slot).
 */
export async function acquireRunSlots(
  redis: Redis,
  keys: { sessionLock: string; userSemaphore: string },
  runId: string,
  limit: number,
  ttlMs: number,
): Promise<RunSlots> {
  return (await acquireScript.run(
    redis,
    [keys.userSemaphore, keys.sessionLock],
    [runId, limit, ttlMs],
  )) as RunSlots;
}

// KEYS[1] the user's semaphore, KEYS[2] the session lock. The lock goes only if this run still
// holds it (a successor's is left alone, as session-lock.ts releases); the slot is the run's own.
const releaseScript = defineLuaScript(`
if redis.call('GET', KEYS[2]) == ARGV[1] then redis.call('DEL', KEYS[2]) end
redis.call('ZREM', KEYS[1], ARGV[1])
return 1`);

/**
 * Gives a run's session lock and its user-semaphore slot back in one round trip: at a run's end
 * (before its `done`, so the author's next run finds both free) and after a refused launch.
 */
export async function releaseRunSlots(
  redis: Redis,
  keys: { sessionLock: string; userSemaphore: string },
  runId: string,
): Promise<void> {
  await releaseScript.run(redis, [keys.userSemaphore, keys.sessionLock], [runId]);
}
