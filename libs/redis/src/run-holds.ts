import type { Redis } from 'ioredis';
import { inBatches } from './batches.ts';
import { defineLuaScript } from './lua-script.ts';

/** What a router holds for a run it is running: its session's lock and one of its user's slots. */
export interface RunHold {
  runId: string;
  /** `keys.sessionLock(sessionId)`: held while its value is the run id (session-lock.ts). */
  sessionLockKey: string;
  /** `keys.userSemaphore(userId)`: held while the run id is a member not yet expired (semaphore.ts). */
  semaphoreKey: string;
}

// KEYS: lock, semaphore for each run, in ARGV's order. ARGV: ttl ms, then run ids.
// The rules of session-lock.ts and semaphore.ts, for many runs in one call: a lock is extended
// only while it still names the run, a slot only while it has not expired (expired members
// leave first, once per semaphore), and a semaphore's own TTL follows its latest member.
// Returns the run ids whose lock or slot was gone.
const RENEW_ALL = defineLuaScript(`
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local ttl = tonumber(ARGV[1])
local swept = {}
local lost = {}
for index = 2, #ARGV do
  local run = ARGV[index]
  local lock = KEYS[2 * index - 3]
  local semaphore = KEYS[2 * index - 2]
  local held = true
  if redis.call('GET', lock) == run then
    redis.call('PEXPIRE', lock, ttl)
  else
    held = false
  end
  if not swept[semaphore] then
    redis.call('ZREMRANGEBYSCORE', semaphore, '-inf', now)
    swept[semaphore] = true
  end
  if redis.call('ZSCORE', semaphore, run) then
    redis.call('ZADD', semaphore, 'XX', now + ttl, run)
  else
    held = false
  end
  if not held then table.insert(lost, run) end
end
for semaphore in pairs(swept) do
  local latest = redis.call('ZRANGE', semaphore, -1, -1, 'WITHSCORES')
  if latest[2] then redis.call('PEXPIREAT', semaphore, latest[2]) end
end
return lost`);

/** Runs per renewal call: bounds one script's time on the server and its argument list. */
export const RUN_HOLD_RENEWAL_BATCH = 250;

/**
 * Extends the session lock and the user slot of every run in `holds` to `ttlMs` from now (the
 * server's clock), one script call per `RUN_HOLD_RENEWAL_BATCH` runs, and returns the run ids
 * whose lock or slot was already gone (expired, or the lock taken by another run).
 */
export async function renewRunHolds(
  redis: Redis,
  holds: readonly RunHold[],
  ttlMs: number,
): Promise<string[]> {
  return inBatches(holds, RUN_HOLD_RENEWAL_BATCH, async (batch) => {
    const keys = batch.flatMap((hold) => [hold.sessionLockKey, hold.semaphoreKey]);
    const runIds = batch.map((hold) => hold.runId);
    return (await RENEW_ALL.run(redis, keys, [ttlMs, ...runIds])) as string[];
  });
}
