import { describe, expect, it } from 'vitest';
import { getStopFlag, openModelTurn, pushSteer, redisKeys, setStopFlag } from '../src/index.ts';
import { testRedis } from './helpers.ts';

const { redis, keys } = testRedis();

describe('key names', () => {
  it('follow docs/architecture.md under the prefix', () => {
    const named = redisKeys('quill');
    expect(named.sessionLock('s')).toBe('quill:lock:session:s');
    expect(named.userSemaphore('u')).toBe('quill:sem:user:u');
    expect(named.steer('r')).toBe('quill:steer:r');
    expect(named.stop('r')).toBe('quill:stop:r');
    expect(named.llmPin('s')).toBe('quill:llm:pin:s');
    expect(named.llmBreaker('primary')).toBe('quill:llm:cb:primary');
    expect(redisKeys('').stop('r')).toBe('stop:r');
    expect(redisKeys('ns:').steer('r')).toBe('ns:steer:r');
  });
});

describe('stop flag', () => {
  it('carries the reason to late joiners', async () => {
    const key = keys.stop('run-1');
    expect(await getStopFlag(redis, key)).toBeNull();
    await setStopFlag(redis, key, 'user_stopped', 60_000);
    expect(await getStopFlag(redis, key)).toBe('user_stopped');
    expect(await redis.pttl(key)).toBeGreaterThan(0);
  });
});

// Interjections are taken when a model call's turn opens (the only reader of the queue).
const drained = async (runId: string) =>
  (
    await openModelTurn(
      redis,
      { steer: keys.steer(runId), modelCalls: keys.runModelCalls(runId), tokens: keys.runTokens(runId) },
      60,
    )
  ).steering;

describe('steering queue', () => {
  it('refuses interjections beyond the bound and drains them in order exactly once', async () => {
    const key = keys.steer('run-2');
    expect(await pushSteer(redis, key, '改成第一人称', 2, 60_000)).toEqual({ accepted: true, length: 1 });
    expect(await pushSteer(redis, key, '加一场雨', 2, 60_000)).toEqual({ accepted: true, length: 2 });
    expect(await pushSteer(redis, key, '第三条', 2, 60_000)).toEqual({ accepted: false, length: 2 });
    expect(await redis.pttl(key)).toBeGreaterThan(0);

    expect(await drained('run-2')).toEqual(['改成第一人称', '加一场雨']);
    expect(await drained('run-2')).toEqual([]);
    expect(await pushSteer(redis, key, '再来', 2, 60_000)).toEqual({ accepted: true, length: 1 });
  });

  it('admits exactly maxLength of many concurrent pushes', async () => {
    const key = keys.steer('run-3');
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, index) => pushSteer(redis, key, `note ${index}`, 5, 60_000)),
    );
    expect(results.filter((result) => result.accepted)).toHaveLength(5);
    expect(await drained('run-3')).toHaveLength(5);
  });
});
