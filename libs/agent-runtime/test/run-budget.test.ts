import { createRedis, redisKeys } from '@quill/redis';
import { afterAll, describe, expect, it } from 'vitest';
import { testUrls, uniqueName } from '../../../test/support/urls.ts';
import { createModelCallBudget, createTokenBudget, tokenBudgetSpent } from '../src/run-budget.ts';

// The run-wide counters over the real Redis, under a prefix of this file's own.
const redis = createRedis(testUrls.redis);
const keys = redisKeys(uniqueName('quill_test_'));
afterAll(async () => {
  const found = await redis.keys(`${keys.prefix}*`);
  if (found.length) await redis.del(...found);
  await redis.quit();
});

describe('run token budget (Redis)', () => {
  it('adds every spend to one run-wide count that two workers of the run share, with the expiry', async () => {
    const first = createTokenBudget(redis, keys, 'run-t1', { counterTtlSeconds: 600 });
    const second = createTokenBudget(redis, keys, 'run-t1', { counterTtlSeconds: 600 });
    const other = createTokenBudget(redis, keys, 'run-t2', { counterTtlSeconds: 600 });
    expect(await first.spent()).toBe(0);
    await first.spend(1_200);
    await second.spend(345);
    await first.spend(0);
    expect(await second.spent()).toBe(1_545);
    expect(await first.spent()).toBe(1_545);
    expect(await other.spent()).toBe(0);
    expect(await redis.get(keys.runTokens('run-t1'))).toBe('1545');
    const ttl = await redis.ttl(keys.runTokens('run-t1'));
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(600);
  });

  it('the cap is reached at, not only past, the limit', () => {
    expect(tokenBudgetSpent(99, 100)).toBe(false);
    expect(tokenBudgetSpent(100, 100)).toBe(true);
    expect(tokenBudgetSpent(101, 100)).toBe(true);
  });

  it('keeps its own key beside the model-call counter', async () => {
    const calls = createModelCallBudget(redis, keys, 'run-t3', {
      maxRunModelCalls: 1,
      counterTtlSeconds: 600,
    });
    const tokens = createTokenBudget(redis, keys, 'run-t3', { counterTtlSeconds: 600 });
    await tokens.spend(50);
    expect(await calls.take()).toBe(true);
    expect(await calls.take()).toBe(false);
    expect(await tokens.spent()).toBe(50);
    expect(keys.runTokens('run-t3')).not.toBe(keys.runModelCalls('run-t3'));
  });
});
