import { setTimeout as sleep } from 'node:timers/promises';
import type { ChatMessage } from '@quill/contracts';
import { type FakeLlm, startFakeLlm } from '@quill/fake-llm';
import { createRedis, type RedisClient, type RedisKeys, redisKeys } from '@quill/redis';
import { testUrls, uniqueName } from '../../../test/support/urls.ts';
import type { BreakerSettings, FirstAdmission } from '../src/circuit-breaker.ts';
import type { LlmTimeouts } from '../src/client.ts';
import type { RetrySettings } from '../src/failover-client.ts';
import {
  collectChat,
  createFailoverClient,
  type FailoverLlmClient,
  type LlmAttempt,
  type LlmProvider,
} from '../src/index.ts';
import type { LlmCallResult } from '../src/types.ts';

/** A primary and a backup fake provider, a Redis connection and a key prefix of this file's own. */
export interface FailoverRig {
  primary: FakeLlm;
  backup: FakeLlm;
  redis: RedisClient;
  keys: RedisKeys;
  providers: LlmProvider[];
  client(options?: ClientOverrides): FailoverLlmClient;
  close(): Promise<void>;
}

export interface ClientOverrides {
  timeouts?: Partial<LlmTimeouts>;
  breaker?: Partial<BreakerSettings>;
  providers?: LlmProvider[];
  retry?: RetrySettings;
  /** Another replica's connection (same keys), or one that cannot reach Redis. */
  redis?: RedisClient;
}

export async function startRig(fakeOptions: { maxInputTokens?: number } = {}): Promise<FailoverRig> {
  const primary = await startFakeLlm({ port: 0, ...fakeOptions });
  const backup = await startFakeLlm({ port: 0, model: 'quill-fake-backup' });
  const redis = createRedis(testUrls.redis);
  const keys = redisKeys(uniqueName('quill_test_llm_'));
  const providers: LlmProvider[] = [
    {
      name: 'primary',
      baseUrl: primary.url,
      apiKey: 'primary-key',
      model: 'quill-fake-1',
      maxInputTokens: fakeOptions.maxInputTokens ?? 128_000,
    },
    {
      name: 'backup',
      baseUrl: backup.url,
      apiKey: 'backup-key',
      model: 'quill-fake-backup',
      maxInputTokens: 128_000,
    },
  ];
  return {
    primary,
    backup,
    redis,
    keys,
    providers,
    client: (overrides = {}) =>
      createFailoverClient({
        providers: overrides.providers ?? providers,
        redis: overrides.redis ?? redis,
        keys,
        timeouts: { connectMs: 5_000, firstTokenMs: 5_000, idleMs: 5_000, ...overrides.timeouts },
        // A threshold no test reaches by accident; the breaker tests set their own.
        breaker: {
          failureThreshold: 1_000,
          windowMs: 60_000,
          cooldownMs: 60_000,
          probeLeaseMs: 5_000,
          ...overrides.breaker,
        },
        pinTtlMs: 60_000,
        ...(overrides.retry ? { retry: overrides.retry } : {}),
      }),
    async close() {
      const found = await redis.keys(`${keys.prefix}*`);
      if (found.length > 0) await redis.del(...found);
      await redis.quit();
      await Promise.all([primary.close(), backup.close()]);
    },
  };
}

export const hello: ChatMessage[] = [{ role: 'user', content: '你好' }];

/** One call through the client; collects its text, its attempts (via the hook) and result or error. */
export async function call(
  client: FailoverLlmClient,
  request: {
    runId: string;
    sessionId?: string;
    role?: string;
    messages?: ChatMessage[];
    admission?: Promise<FirstAdmission>;
  },
): Promise<{
  text: string;
  thinking: string;
  attempts: LlmAttempt[];
  result?: LlmCallResult;
  error?: unknown;
}> {
  const attempts: LlmAttempt[] = [];
  let text = '';
  let thinking = '';
  try {
    const result = await collectChat(
      client.streamChat({
        messages: request.messages ?? hello,
        role: request.role ?? 'quality_reviewer',
        runId: request.runId,
        ...(request.sessionId ? { sessionId: request.sessionId } : {}),
        ...(request.admission ? { admission: request.admission } : {}),
        onAttempt: (attempt) => attempts.push(attempt),
      }),
      (event) => {
        if (event.type === 'text') text += event.delta;
        if (event.type === 'thinking') thinking += event.delta;
      },
    );
    return { text, thinking, attempts, result };
  } catch (error) {
    return { text, thinking, attempts, error };
  }
}

/** Polls until check passes; for cooldowns, where how long it takes is not what is under test. */
export async function eventually(check: () => Promise<boolean>, attempts = 400): Promise<boolean> {
  for (let attempt = 0; attempt < attempts; attempt++) {
    if (await check()) return true;
    await sleep(25);
  }
  return false;
}
