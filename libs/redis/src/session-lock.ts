import type { Redis } from 'ioredis';
import { defineLuaScript } from './lua-script.ts';

// Only the holder (same token) may drop the lock: a holder that stalled past its TTL must not
// delete the lock its successor now holds. Renewal follows the same rule (run-holds.ts).
const releaseScript = defineLuaScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0`);

/** Takes the lock when free; true when this token now holds it. */
export async function acquireSessionLock(
  redis: Redis,
  key: string,
  token: string,
  ttlMs: number,
): Promise<boolean> {
  return (await redis.set(key, token, 'PX', ttlMs, 'NX')) === 'OK';
}

/** Releases the lock if this token holds it; false when it did not. */
export async function releaseSessionLock(redis: Redis, key: string, token: string): Promise<boolean> {
  return (await releaseScript.run(redis, [key], [token])) === 1;
}

/** The current holder's token, or null when the session is free. */
export async function getSessionLockHolder(redis: Redis, key: string): Promise<string | null> {
  return redis.get(key);
}
