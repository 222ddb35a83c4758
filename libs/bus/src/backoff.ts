/** The part of a pino logger the retry loop needs (so callers can pass a child or a stub). */
export interface RetryLogger {
  warn(object: object, message: string): void;
}

export interface RetryOptions {
  /** What is waited for, in the log line of every failed attempt (e.g. `NATS at nats://…`). */
  what: string;
  logger?: RetryLogger | undefined;
  /** First delay; doubles per attempt up to `maxDelayMs`, each with full jitter. */
  initialDelayMs?: number;
  maxDelayMs?: number;
  /** Attempts in all (default: until `deadlineMs` or the signal). */
  attempts?: number;
  /** No new attempt starts later than this many ms after the first. */
  deadlineMs?: number;
  /**
   * When the first attempt started (`Date.now()`), if before this call: a publish whose first
   * attempt was sent without the loop enters it only once that attempt failed.
   */
  startedAt?: number | undefined;
  /** Errors that are worth another attempt; anything else is thrown at once. */
  retryable?: (error: unknown) => boolean;
  signal?: AbortSignal | undefined;
}

/** The delay before retry number `attempt` (1-based): exponential, capped, full jitter. */
export function backoffDelay(attempt: number, initialDelayMs: number, maxDelayMs: number): number {
  const ceiling = Math.min(maxDelayMs, initialDelayMs * 2 ** Math.max(0, attempt - 1));
  // Full jitter: replicas that lost the same dependency at the same moment do not retry in step.
  return ceiling / 2 + Math.random() * (ceiling / 2);
}

/**
 * Runs `operation` until it succeeds, with capped exponential backoff between attempts, logging
 * each failure with what it waits for. Start-up uses it unbounded (a replica waits for its
 * dependencies instead of exiting, README "Fault tolerance"); request paths bound it by attempts
 * or a deadline. The last error is thrown when the budget is spent.
 */
export async function retryWithBackoff<T>(
  operation: (attempt: number) => Promise<T>,
  options: RetryOptions,
): Promise<T> {
  const initial = options.initialDelayMs ?? 200;
  const max = options.maxDelayMs ?? 5000;
  const attempts = options.attempts ?? Number.POSITIVE_INFINITY;
  const startedAt = options.startedAt ?? Date.now();
  for (let attempt = 1; ; attempt++) {
    try {
      return await operation(attempt);
    } catch (error) {
      if (options.signal?.aborted) throw error;
      if (options.retryable && !options.retryable(error)) throw error;
      if (attempt >= attempts) throw error;
      const delay = backoffDelay(attempt, initial, max);
      if (options.deadlineMs !== undefined && Date.now() - startedAt + delay > options.deadlineMs)
        throw error;
      options.logger?.warn(
        { err: error, attempt, retry_in_ms: Math.round(delay), waiting_for: options.what },
        `waiting for ${options.what}`,
      );
      await sleep(delay, options.signal);
      if (options.signal?.aborted) throw error;
    }
  }
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}

const TRANSIENT_NATS_ERRORS = new Set([
  'TimeoutError',
  'NoRespondersError',
  'ConnectionError',
  'RequestError',
  'JetStreamNotEnabled',
]);

/**
 * A NATS or JetStream failure that another attempt may not meet: the server or the API did not
 * answer in time, nobody served the subject yet, JetStream was still starting or recovering. A
 * refused configuration or a missing stream is an answer and is not retried.
 */
export function isTransientNatsError(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  if (TRANSIENT_NATS_ERRORS.has(error.name)) return true;
  return /timeout|timed out|no responders|temporarily unavailable|connection (closed|refused)|ECONNREFUSED/i.test(
    error.message,
  );
}
