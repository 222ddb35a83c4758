import type { ChatMessage } from '@quill/contracts';
import { openModelTurn, type RedisClient, type RedisKeys } from '@quill/redis';
import { quillMetrics } from '@quill/telemetry';

/**
 * Budgets of the worker loop (docs/agent-behaviour.md 预算). `AGENT_RUN_MAX_MODEL_CALLS` is run-wide: the steps of
 * one run execute on different workers and replicas, so the count lives in Redis (INCR, with an
 * expiry past the run's wall clock so abandoned counters disappear). `AGENT_TOOL_CALL_MAX_ITERATIONS`
 * is per step; its last turns carry a soft-landing note so the model wraps up instead of being cut.
 * `AGENT_RUN_MAX_TOKENS` caps the run's prompt + completion tokens the same run-wide way.
 */
export const SOFT_LANDING_TURNS = 3;

export interface TurnOpener {
  /**
   * Opens a model call's turn in one round trip: takes the author's queued interjections (each
   * delivered to exactly one call; one that arrives between two steps waits for the next step's
   * first call), counts the call against the run's cap (`allowed` false once it would exceed
   * it) and reads the run's tokens so far.
   */
  open(): Promise<{ steering: string[]; allowed: boolean; tokensSpent: number }>;
}

export function createTurnOpener(
  redis: RedisClient,
  keys: RedisKeys,
  runId: string,
  settings: { maxRunModelCalls: number; counterTtlSeconds: number },
): TurnOpener {
  const turnKeys = {
    steer: keys.steer(runId),
    modelCalls: keys.runModelCalls(runId),
    tokens: keys.runTokens(runId),
  };
  return {
    async open() {
      const opened = await openModelTurn(redis, turnKeys, settings.counterTtlSeconds);
      if (opened.steering.length > 0)
        quillMetrics().steeringMessages.add(opened.steering.length, { stage: 'delivered' });
      return {
        steering: opened.steering,
        allowed: opened.modelCalls <= settings.maxRunModelCalls,
        tokensSpent: opened.tokensSpent,
      };
    },
  };
}

export interface TokenBudget {
  /** Adds one model call's prompt + completion tokens to the run's count. */
  spend(tokens: number): Promise<void>;
  /** The run's tokens so far, across every step and worker. */
  spent(): Promise<number>;
}

/**
 * `AGENT_RUN_MAX_TOKENS` is counted like the model calls: run-wide in Redis (INCRBY, same expiry).
 * Only the count lives here; whether a run is over it is the step machine's rule.
 */
export function createTokenBudget(
  redis: RedisClient,
  keys: RedisKeys,
  runId: string,
  settings: { counterTtlSeconds: number },
): TokenBudget {
  const key = keys.runTokens(runId);
  return {
    async spend(tokens) {
      if (tokens <= 0) return;
      await redis.multi().incrby(key, tokens).expire(key, settings.counterTtlSeconds).exec();
    },
    async spent() {
      return Number((await redis.get(key)) ?? 0);
    },
  };
}

/** True once the run's tokens reached its cap: no further model call starts. */
export function tokenBudgetSpent(spent: number, maxRunTokens: number): boolean {
  return spent >= maxRunTokens;
}

/** The soft-landing note, for the one turn where the step enters its last turns; else undefined. */
export function softLandingNote(turn: number, maxTurns: number): ChatMessage | undefined {
  const left = maxTurns - turn;
  if (left !== Math.min(SOFT_LANDING_TURNS, maxTurns)) return undefined;
  return {
    role: 'user',
    content: `[本次运行的系统指令] 本步骤只剩 ${left} 次模型调用：不要再开始新的工具操作；写完手头的内容（正文写进 <file>…</file>），然后用一两句话告诉作者完成了什么、还剩什么。`,
  };
}

/** Appends the soft-landing note once, when the step enters its last turns. */
export function softLanding(turn: number, maxTurns: number, messages: ChatMessage[]): boolean {
  const note = softLandingNote(turn, maxTurns);
  if (note) messages.push(note);
  return note !== undefined;
}
