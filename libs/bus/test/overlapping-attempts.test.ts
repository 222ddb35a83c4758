import { describe, expect, it, vi } from 'vitest';
import { overlappingAttempts } from '../src/overlapping-attempts.ts';

class Retryable extends Error {}
const options = {
  what: 'the answer',
  patienceMs: 20,
  deadlineMs: 2000,
  initialDelayMs: 5,
  maxDelayMs: 20,
  retryable: (error: unknown) => error instanceof Retryable,
};
const never = () => new Promise<never>(() => undefined);

describe('overlappingAttempts', () => {
  it('keeps an attempt that has not answered yet listening while the next ones start', async () => {
    const resolvers: Array<(value: string) => void> = [];
    const result = overlappingAttempts(
      () =>
        new Promise<string>((resolve) => {
          resolvers.push(resolve);
          // The first attempt answers only once a third has started beside it.
          if (resolvers.length === 3) resolvers[0]!('from the first');
        }),
      options,
    );
    expect(await result).toBe('from the first');
    expect(resolvers).toHaveLength(3);
  });

  it('asks again after fast failures and returns the first success', async () => {
    let calls = 0;
    const listens: number[] = [];
    const value = await overlappingAttempts(async (listenMs) => {
      listens.push(listenMs);
      if (++calls < 4) throw new Retryable(`no responder ${calls}`);
      return calls;
    }, options);
    expect(value).toBe(4);
    // Each attempt may listen for what is left of the deadline, never for more.
    expect(listens.every((ms) => ms <= options.deadlineMs)).toBe(true);
  });

  it('ends at once on a failure that is not worth another attempt', async () => {
    let calls = 0;
    const error = await overlappingAttempts(async () => {
      calls++;
      throw new Error('invalid reply');
    }, options).catch((caught: unknown) => caught);
    expect((error as Error).message).toBe('invalid reply');
    expect(calls).toBe(1);
  });

  it('throws the last failure once the deadline has passed and every attempt has failed', async () => {
    let calls = 0;
    const error = await overlappingAttempts(
      async () => {
        calls++;
        throw new Retryable(`failure ${calls}`);
      },
      { ...options, deadlineMs: 150 },
    ).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(Retryable);
    expect((error as Error).message).toBe(`failure ${calls}`);
    expect(calls).toBeGreaterThan(1);
  });

  it('waits for silent attempts to end before giving up, and starts none after the deadline', async () => {
    // Fake timers: the clock moves only when the test moves it, so "after the deadline" is exact.
    vi.useFakeTimers();
    try {
      const started: number[] = [];
      const startedAt = Date.now();
      const call = overlappingAttempts(
        (listenMs) => {
          started.push(Date.now() - startedAt);
          // Silent until its listening time is up, as a request to a frozen replica.
          return new Promise<never>((_resolve, reject) =>
            setTimeout(() => reject(new Retryable('timeout')), listenMs),
          );
        },
        { ...options, deadlineMs: 200 },
      ).catch((caught: unknown) => caught);
      await vi.advanceTimersByTimeAsync(1000);
      expect(await call).toBeInstanceOf(Retryable);
      expect(started.length).toBeGreaterThan(1);
      expect(started.every((at) => at <= 200)).toBe(true);
    } finally {
      vi.useRealTimers();
    }
  });

  it('returns a later attempt’s success while an earlier one is still silent', async () => {
    let calls = 0;
    const value = await overlappingAttempts(() => {
      calls++;
      if (calls === 1) return never();
      return Promise.resolve('second');
    }, options);
    expect(value).toBe('second');
  });
});
