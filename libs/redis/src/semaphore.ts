import type { Redis } from 'ioredis';
import { defineLuaScript } from './lua-script.ts';

// A sorted set of holders scored by their expiry (ms, Redis server clock so every replica
// agrees). A crashed holder stops renewing and falls out once its score is in the past. The
// key's own TTL follows the latest member so an abandoned semaphore disappears entirely.
// KEYS[1] is the semaphore; run-slots.ts's launch script shares this prelude and the admission.
export const SEMAPHORE_PRELUDE = `
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local function expireWithLatest()
  local latest = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
  if latest[2] then redis.call('PEXPIREAT', KEYS[1], latest[2]) end
end
`;

/** Lua: true when `member` holds or can take one of `limit` slots (after SEMAPHORE_PRELUDE). */
export const SEMAPHORE_ADMITS = `local function admits(member, limit)
  return redis.call('ZSCORE', KEYS[1], member) or redis.call('ZCARD', KEYS[1]) < limit
end
local function take(member, ttl)
  redis.call('ZADD', KEYS[1], now + ttl, member)
  expireWithLatest()
end
`;

const acquireScript = defineLuaScript(`${SEMAPHORE_PRELUDE}${SEMAPHORE_ADMITS}
local member, limit, ttl = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
if not admits(member, limit) then return 0 end
take(member, ttl)
return 1`);

/**
 * Takes one of `limit` slots for memberId (e.g. a run id) for ttlMs. Acquiring again with the
 * same member refreshes its slot instead of taking a second one, so retries are harmless.
 */
export async function acquireSemaphore(
  redis: Redis,
  key: string,
  memberId: string,
  limit: number,
  ttlMs: number,
): Promise<boolean> {
  return (await acquireScript.run(redis, [key], [memberId, limit, ttlMs])) === 1;
}

export async function releaseSemaphore(redis: Redis, key: string, memberId: string): Promise<boolean> {
  return (await redis.zrem(key, memberId)) === 1;
}

/** How many live holders the semaphore has (expired members are not counted). */
export async function countSemaphore(redis: Redis, key: string): Promise<number> {
  const time = await redis.time();
  const now = Number(time[0]) * 1000 + Math.floor(Number(time[1]) / 1000);
  return redis.zcount(key, `(${now}`, '+inf');
}
