import { createRedis, redisKeys } from '@quill/redis';
import { afterAll, describe, expect, it } from 'vitest';
import { testUrls, uniqueName } from '../../../test/support/urls.ts';
import { createTokenBudget, createTurnOpener, tokenBudgetSpent } from '../src/run-budget.ts';

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

  it('opens a turn in one round trip: interjections taken once, the call counted, the tokens read', async () => {
    const turns = createTurnOpener(redis, keys, 'run-t3', { maxRunModelCalls: 1, counterTtlSeconds: 600 });
    const tokens = createTokenBudget(redis, keys, 'run-t3', { counterTtlSeconds: 600 });
    await tokens.spend(50);
    await redis.rpush(keys.steer('run-t3'), '改成第一人称', '加一场雨');
    expect(await turns.open()).toEqual({
      steering: ['改成第一人称', '加一场雨'],
      allowed: true,
      tokensSpent: 50,
    });
    // The second call is past the cap of one; the interjections went to the first.
    expect(await turns.open()).toEqual({ steering: [], allowed: false, tokensSpent: 50 });
    expect(await redis.get(keys.runModelCalls('run-t3'))).toBe('2');
    const ttl = await redis.ttl(keys.runModelCalls('run-t3'));
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(600);
    expect(keys.runTokens('run-t3')).not.toBe(keys.runModelCalls('run-t3'));
    // Another run's turn sees none of it.
    const other = createTurnOpener(redis, keys, 'run-t4', { maxRunModelCalls: 1, counterTtlSeconds: 600 });
    expect(await other.open()).toEqual({ steering: [], allowed: true, tokensSpent: 0 });
  });
});
