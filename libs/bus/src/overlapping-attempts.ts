import { backoffDelay, type RetryLogger } from './backoff.ts';

export interface OverlappingAttemptOptions {
  /** What is asked for, in the log line of each new attempt. */
  what: string;
  logger?: RetryLogger | undefined;
  /** How long an attempt waits for its answer before the next one starts beside it. */
  patienceMs: number;
  /** No attempt starts later than this many ms after the first; every one listens until then. */
  deadlineMs: number;
  initialDelayMs: number;
  maxDelayMs: number;
  /** Failures worth another attempt; anything else ends the call at once. */
  retryable: (error: unknown) => boolean;
}

/**
 * Runs `attempt` until one succeeds, with attempts that overlap: one that has not answered within
 * `patienceMs` keeps listening while the next starts (after a capped, jittered backoff), and the
 * first success among all of them is the result. A request/reply attempt that timed out is not
 * always a dead replica: a live one on a saturated machine answers a little later, and dropping
 * that answer only to ask again (maybe the same replica) can miss every answer until the
 * deadline (docs/architecture.md "Scaling and failure"). An attempt that fails fast (no
 * responder, a replica-failure reply) is followed after the backoff alone.
 *
 * `attempt` is given how long it may listen: what is left of the deadline, so nothing it asked
 * outlives the call by more than a round trip. When the deadline has passed and every attempt
 * has failed, the last failure is thrown.
 */
export function overlappingAttempts<T>(
  attempt: (listenMs: number) => Promise<T>,
  options: OverlappingAttemptOptions,
): Promise<T> {
  const startedAt = Date.now();
  const elapsed = () => Date.now() - startedAt;
  return new Promise<T>((resolve, reject) => {
    let started = 0;
    let pending = 0;
    let done = false;
    let lastError: unknown;
    let next: ReturnType<typeof setTimeout> | undefined;

    const finish = (outcome: { value: T } | { error: unknown }) => {
      if (done) return;
      done = true;
      clearTimeout(next);
      if ('value' in outcome) resolve(outcome.value);
      else reject(outcome.error);
    };
    /** The next attempt after `waitMs`, unless it would start after the deadline. */
    const schedule = (waitMs: number) => {
      clearTimeout(next);
      next = undefined;
      if (elapsed() + waitMs > options.deadlineMs) {
        if (pending === 0) finish({ error: lastError });
        return;
      }
      next = setTimeout(() => {
        next = undefined;
        // A timer that fired late on a busy process still starts nothing after the deadline.
        if (elapsed() > options.deadlineMs) {
          if (pending === 0) finish({ error: lastError });
          return;
        }
        // `pending`: earlier attempts still listening (not answered yet, not failed).
        options.logger?.warn(
          { err: lastError, attempt: started + 1, pending, waiting_for: options.what },
          `asking again for ${options.what}`,
        );
        launch();
      }, waitMs);
    };
    const launch = () => {
      if (done) return;
      started++;
      pending++;
      const number = started;
      // The floor keeps a last attempt near the deadline long enough for one round trip.
      let asked: Promise<T>;
      try {
        asked = attempt(Math.max(100, options.deadlineMs - elapsed()));
      } catch (error) {
        asked = Promise.reject(error);
      }
      asked.then(
        (value) => finish({ value }),
        (error: unknown) => {
          pending--;
          if (done) return;
          lastError = error;
          if (!options.retryable(error)) return finish({ error });
          // Only the newest attempt's failure moves the next one earlier; an older one that
          // failed meanwhile changes nothing about when the next starts.
          if (number === started) schedule(backoffDelay(number, options.initialDelayMs, options.maxDelayMs));
          else if (pending === 0 && next === undefined) finish({ error });
        },
      );
      if (done) return;
      schedule(options.patienceMs + backoffDelay(number, options.initialDelayMs, options.maxDelayMs));
    };
    launch();
  });
}
