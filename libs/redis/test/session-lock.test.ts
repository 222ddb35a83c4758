import { describe, expect, it } from 'vitest';
import {
  acquireSessionLock,
  defineLuaScript,
  getSessionLockHolder,
  releaseSessionLock,
} from '../src/index.ts';
import { eventually, testRedis } from './helpers.ts';

const { redis, keys } = testRedis();

describe('session lock', () => {
  it('is exclusive until released by its holder', async () => {
    const key = keys.sessionLock('s1');
    expect(key).toBe(`${keys.prefix}lock:session:s1`);
    expect(await acquireSessionLock(redis, key, 'gateway-a', 30_000)).toBe(true);
    expect(await acquireSessionLock(redis, key, 'gateway-b', 30_000)).toBe(false);
    expect(await acquireSessionLock(redis, key, 'gateway-a', 30_000)).toBe(false);
    expect(await getSessionLockHolder(redis, key)).toBe('gateway-a');

    expect(await releaseSessionLock(redis, key, 'gateway-b')).toBe(false);
    expect(await getSessionLockHolder(redis, key)).toBe('gateway-a');
    expect(await releaseSessionLock(redis, key, 'gateway-a')).toBe(true);
    expect(await getSessionLockHolder(redis, key)).toBeNull();
    expect(await acquireSessionLock(redis, key, 'gateway-b', 30_000)).toBe(true);
  });

  it('frees the session when a crashed holder stops renewing', async () => {
    const key = keys.sessionLock('s3');
    expect(await acquireSessionLock(redis, key, 'crashed', 100)).toBe(true);
    expect(await eventually(() => acquireSessionLock(redis, key, 'successor', 30_000))).toBe(true);
    // The stale holder cannot delete its successor's lock (nor extend it: run-holds.test.ts).
    expect(await releaseSessionLock(redis, key, 'crashed')).toBe(false);
    expect(await getSessionLockHolder(redis, key)).toBe('successor');
  });
});

describe('lua scripts', () => {
  it('falls back to the source when the server has not cached the script', async () => {
    // A source no server has seen yet: EVALSHA answers NOSCRIPT and the helper must recover.
    const script = defineLuaScript(`-- ${keys.prefix}\nreturn redis.call('INCR', KEYS[1])`);
    const key = `${keys.prefix}counter`;
    expect(await script.run(redis, [key], [])).toBe(1);
    expect(await script.run(redis, [key], [])).toBe(2);
  });
});
