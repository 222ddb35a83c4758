import { describe, expect, it } from 'vitest';
import { acquireSemaphore, countSemaphore, releaseSemaphore } from '../src/index.ts';
import { eventually, testRedis } from './helpers.ts';

const { redis, keys } = testRedis();

describe('per-user semaphore', () => {
  it('admits up to the limit and frees a slot on release', async () => {
    const key = keys.userSemaphore('u1');
    expect(await acquireSemaphore(redis, key, 'run-1', 2, 30_000)).toBe(true);
    expect(await acquireSemaphore(redis, key, 'run-2', 2, 30_000)).toBe(true);
    expect(await acquireSemaphore(redis, key, 'run-3', 2, 30_000)).toBe(false);
    // A retried acquire by a holder keeps its one slot.
    expect(await acquireSemaphore(redis, key, 'run-1', 2, 30_000)).toBe(true);
    expect(await countSemaphore(redis, key)).toBe(2);

    expect(await releaseSemaphore(redis, key, 'run-1')).toBe(true);
    expect(await releaseSemaphore(redis, key, 'run-1')).toBe(false);
    expect(await acquireSemaphore(redis, key, 'run-3', 2, 30_000)).toBe(true);
    expect(await redis.pttl(key)).toBeGreaterThan(0);
  });

  it('lets an expired holder slot go to the next run', async () => {
    const key = keys.userSemaphore('u2');
    expect(await acquireSemaphore(redis, key, 'crashed', 1, 100)).toBe(true);
    expect(await acquireSemaphore(redis, key, 'next', 1, 30_000)).toBe(false);
    expect(await eventually(() => acquireSemaphore(redis, key, 'next', 1, 30_000))).toBe(true);
    expect(await countSemaphore(redis, key)).toBe(1);
  });
});
