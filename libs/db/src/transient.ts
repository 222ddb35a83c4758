import { setTimeout as sleep } from 'node:timers/promises';
import { pgErrorCode } from './pool.ts';

/**
 * Errors after which the same statement can succeed a moment later: the connection dropped or
 * could not be made, the server is restarting or out of connection slots, or Postgres chose this
 * transaction as the loser of a serialization conflict or deadlock. Everything else (constraint
 * violations, bad input, fencing) is an answer, not a fault, and is never retried.
 */
const TRANSIENT_SQLSTATES = new Set(['53300', '57P01', '57P02', '57P03', '40001', '40P01', '55P03']);
const TRANSIENT_NODE_CODES = new Set(['ECONNRESET', 'ECONNREFUSED', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH']);
const TRANSIENT_MESSAGES = [
  /Connection terminated/i,
  /timeout exceeded when trying to connect/i,
  /Client has encountered a connection error/i,
  /the database system is (starting up|shutting down)/i,
];

export function isTransientDbError(error: unknown): boolean {
  const code = pgErrorCode(error);
  if (code !== undefined) {
    // Class 08: connection exceptions.
    if (code.startsWith('08') || TRANSIENT_SQLSTATES.has(code) || TRANSIENT_NODE_CODES.has(code)) return true;
  }
  if (error instanceof AggregateError) return error.errors.some(isTransientDbError);
  const message = error instanceof Error ? error.message : '';
  return TRANSIENT_MESSAGES.some((pattern) => pattern.test(message));
}

export interface RetryPolicy {
  /** Give up once this much time has passed since the first try (the last error is thrown). */
  maxMs: number;
  /** First back-off; doubles per retry up to maxDelayMs, with jitter. */
  baseDelayMs?: number;
  maxDelayMs?: number;
  onRetry?: (error: unknown, attempt: number, delayMs: number) => void;
}

/** The back-off before retry `attempt` (1-based): exponential, capped, with full jitter above half. */
export function retryDelay(
  attempt: number,
  base: number,
  cap: number,
  random: () => number = Math.random,
): number {
  const ceiling = Math.min(cap, base * 2 ** (attempt - 1));
  return Math.round(ceiling / 2 + (random() * ceiling) / 2);
}

/**
 * Runs fn until it succeeds, fails with a non-transient error, or the time budget is spent.
 * fn must be safe to run again: a transaction that rolled back, or a write that carries an
 * idempotency key (an error during COMMIT leaves its outcome unknown).
 */
export async function retryTransient<T>(fn: () => Promise<T>, policy: RetryPolicy): Promise<T> {
  const startedAt = performance.now();
  const base = policy.baseDelayMs ?? 100;
  const cap = policy.maxDelayMs ?? 2_000;
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn();
    } catch (error) {
      const elapsed = performance.now() - startedAt;
      if (!isTransientDbError(error) || elapsed >= policy.maxMs) throw error;
      const delay = Math.min(retryDelay(attempt, base, cap), Math.max(0, policy.maxMs - elapsed));
      policy.onRetry?.(error, attempt, delay);
      await sleep(delay);
    }
  }
}
