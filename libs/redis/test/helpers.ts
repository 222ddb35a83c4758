import { setTimeout as sleep } from 'node:timers/promises';
import type { Redis } from 'ioredis';
import { afterAll } from 'vitest';
import { testUrls, uniqueName } from '../../../test/support/urls.ts';
import { createRedis, type RedisKeys, redisKeys } from '../src/index.ts';

/** A random prefix per test file, and cleanup of everything written under it. */
export function testKeys(): RedisKeys {
  return redisKeys(uniqueName('quill_test_'));
}

/** A test file's Redis client and key prefix; what it wrote is deleted and the client closed after it. */
export function testRedis(): { redis: Redis; keys: RedisKeys } {
  const redis = createRedis(testUrls.redis);
  const keys = testKeys();
  afterAll(async () => {
    await deleteKeys(redis, keys);
    await redis.quit();
  });
  return { redis, keys };
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
