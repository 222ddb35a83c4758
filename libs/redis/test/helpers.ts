import { setTimeout as sleep } from 'node:timers/promises';
import type { Redis } from 'ioredis';
import { uniqueName } from '../../../test/support/urls.ts';
import { type RedisKeys, redisKeys } from '../src/index.ts';

/** A random prefix per test file, and cleanup of everything written under it. */
export function testKeys(): RedisKeys {
  return redisKeys(uniqueName('quill_test_'));
}

export async function deleteKeys(redis: Redis, keys: RedisKeys): Promise<void> {
  const found = await redis.keys(`${keys.prefix}*`);
  if (found.length) await redis.del(...found);
}

/** Polls until check passes; for expiry, where how long it takes is not what is under test. */
export async function eventually(check: () => Promise<boolean>, attempts = 200): Promise<boolean> {
  for (let attempt = 0; attempt < attempts; attempt++) {
    if (await check()) return true;
    await sleep(25);
  }
  return false;
}
