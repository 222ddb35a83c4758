import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';

export interface LuaScript {
  readonly sha: string;
  run(redis: Redis, keys: readonly string[], args: ReadonlyArray<string | number>): Promise<unknown>;
}

/**
 * A server-side script sent by hash, falling back to the full source once per server that has
 * not cached it yet (fresh server, SCRIPT FLUSH, failover to a replica).
 */
export function defineLuaScript(source: string): LuaScript {
  const sha = createHash('sha1').update(source).digest('hex');
  return {
    sha,
    async run(redis, keys, args) {
      try {
        return await redis.evalsha(sha, keys.length, ...keys, ...args);
      } catch (error) {
        if (!(error instanceof Error) || !error.message.startsWith('NOSCRIPT')) throw error;
        return redis.eval(source, keys.length, ...keys, ...args);
      }
    },
  };
}
