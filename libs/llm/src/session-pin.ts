import type { RedisClient, RedisKeys } from '@quill/redis';

/**
 * A session stays on the provider that last served it (`llm:pin:<sessionId>`): consecutive calls
 * of one conversation see the same model (and keep that provider's prompt cache warm), on any
 * replica. The pin expires after `ttlMs` without calls, so an idle session starts again from the
 * primary. It is read with the first provider's admission, in the breaker's script
 * (`CircuitBreaker.admitFirst`), and written here after a call that provider served.
 */
export interface SessionPins {
  set(sessionId: string, provider: string): Promise<void>;
}

export function createSessionPins(redis: RedisClient, keys: RedisKeys, ttlMs: number): SessionPins {
  return {
    async set(sessionId, provider) {
      await redis.set(keys.llmPin(sessionId), provider, 'PX', ttlMs);
    },
  };
}
