import { describe, expect, it } from 'vitest';
import {
  HEAP_GROWTH_BYTES,
  type IdleMemorySample,
  type IdleMemoryState,
  INITIAL_IDLE_MEMORY_STATE,
  idleMemoryStep,
  type MemoryReduction,
  QUIET_UTILIZATION,
  startIdleMemoryReducer,
} from '../src/idle-memory.ts';

const MB = 2 ** 20;
const quiet = (heapMb: number, elapsedMs = 1000): IdleMemorySample => ({
  utilization: 0.001,
  elapsedMs,
  heapTotalBytes: heapMb * MB,
});
const busy = (heapMb: number): IdleMemorySample => ({
  utilization: 0.4,
  elapsedMs: 1000,
  heapTotalBytes: heapMb * MB,
});

/** Feeds samples through the rule, returning after which ones it said to reduce. */
function reductions(samples: IdleMemorySample[], start: IdleMemoryState = INITIAL_IDLE_MEMORY_STATE) {
  let state = start;
  const at: number[] = [];
  samples.forEach((sample, index) => {
    const step = idleMemoryStep(state, sample, 3000);
    state = step.state;
    if (step.reduce) {
      at.push(index);
      // What the wiring does after collecting; the heap's size is the sampled one (the samples
      // that follow say what it is then).
      state = { heapAfterReduceBytes: sample.heapTotalBytes, quietMs: 0 };
    }
  });
  return at;
}

describe('idle memory rule', () => {
  it('reduces once, at the end of the first quiet spell after start-up', () => {
    expect(reductions([busy(90), quiet(95), quiet(95), quiet(95), quiet(95), quiet(95), quiet(95)])).toEqual([
      3,
    ]);
  });

  it('never reduces while work goes on, and a busy sample restarts the quiet spell', () => {
    expect(reductions([busy(90), busy(90), busy(95), busy(99)])).toEqual([]);
    expect(reductions([quiet(90), quiet(90), busy(90), quiet(90), quiet(90), quiet(90)])).toEqual([5]);
  });

  it('reduces again after a burst only when the heap grew by the threshold since the last time', () => {
    const afterReduce: IdleMemoryState = { heapAfterReduceBytes: 25 * MB, quietMs: 0 };
    const grown = 25 + HEAP_GROWTH_BYTES / MB;
    // A metrics scrape or a heartbeat now and then: busy samples, no growth, nothing to give back.
    expect(reductions([busy(26), quiet(26), quiet(26), quiet(26), quiet(26)], afterReduce)).toEqual([]);
    expect(reductions([busy(grown), quiet(grown), quiet(grown), quiet(grown)], afterReduce)).toEqual([3]);
  });

  it('counts sampled time, so a late timer on a starved machine is not a longer quiet spell than it was', () => {
    expect(reductions([quiet(90, 400), quiet(90, 400), quiet(90, 400)])).toEqual([]);
    expect(reductions([quiet(90, 2500), quiet(90, 500)])).toEqual([1]);
  });

  it('treats the utilization threshold as busy', () => {
    const step = idleMemoryStep(
      { heapAfterReduceBytes: undefined, quietMs: 10_000 },
      { utilization: QUIET_UTILIZATION, elapsedMs: 1000, heapTotalBytes: 90 * MB },
      3000,
    );
    expect(step).toEqual({ state: { heapAfterReduceBytes: undefined, quietMs: 0 }, reduce: false });
  });
});

describe('idle memory reducer', () => {
  it('gives back the young generation a burst of allocation grew, once, when the loop goes quiet', async () => {
    // Grow the heap as start-up does: many short-lived objects, some kept for a while.
    let kept: unknown[] = [];
    for (let index = 0; index < 3_000_000; index++) {
      kept.push({ index, text: `chunk ${index}` });
      if (kept.length > 50_000) kept = [];
    }
    kept = [];
    const reduced: MemoryReduction[] = [];
    const stop = startIdleMemoryReducer({
      quietAfterMs: 150,
      sampleMs: 50,
      onReduced: (reduction) => reduced.push(reduction),
    });
    try {
      await expect.poll(() => reduced.length, { timeout: 30_000, interval: 50 }).toBe(1);
      // Quiet on: with nothing grown since, no second collection.
      await new Promise((resolve) => setTimeout(resolve, 600));
      expect(reduced).toHaveLength(1);
      const [reduction] = reduced;
      expect(reduction!.heapAfterBytes).toBeLessThan(reduction!.heapBeforeBytes);
      expect(reduction!.pauseMs).toBeGreaterThan(0);
    } finally {
      stop();
    }
  });
});
