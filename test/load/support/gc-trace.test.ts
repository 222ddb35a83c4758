import { describe, expect, it } from 'vitest';
import { type GcEvent, parseGcLine, summariseGc } from './gc-trace.ts';

// Lines as Node 24's `--trace-gc` printed them for a writer and a context service.
const SCAVENGE =
  '[9721:0x186af000]     7619 ms: Scavenge 82.0 (121.0) -> 61.2 (187.7) MB, pooled: 0 MB, 17.80 / 0.02 ms  (average mu = 0.963, current mu = 0.954) task; ';
const FULL =
  '[9695:0x22198000]     5883 ms: Mark-Compact 39.8 (101.8) -> 31.1 (101.3) MB, pooled: 0 MB, 36.02 / 0.01 ms  (+ 31.2 ms in 89 steps since start of marking, biggest step 20.1 ms, walltime since start of marking 82 ms) (average mu = 0.988, current mu = 0.988) finalize incremental marking via task; GC in old space requested';
const REDUCING =
  '[9695:0x22198000]    14059 ms: Mark-Compact (reduce) 51.6 (101.8) -> 31.7 (34.1) MB, pooled: 0 MB, 45.25 / 0.01 ms  (+ 6.4 ms in 60 steps since start of marking) (average mu = 0.992, current mu = 0.994) finalize incremental marking via task; GC in old space requested';

describe('gc trace lines', () => {
  it('reads a young collection, a full one and a memory-reducing one', () => {
    expect(parseGcLine(SCAVENGE, 1)).toEqual({
      at: 1,
      kind: 'young',
      beforeMb: 82,
      afterMb: 61.2,
      pauseMs: 17.8,
    });
    expect(parseGcLine(FULL, 2)).toEqual({
      at: 2,
      kind: 'full',
      beforeMb: 39.8,
      afterMb: 31.1,
      pauseMs: 36.02,
    });
    expect(parseGcLine(REDUCING, 3)).toMatchObject({
      kind: 'full',
      beforeMb: 51.6,
      afterMb: 31.7,
      pauseMs: 45.25,
    });
  });

  it('ignores log lines and a line cut by a partial read', () => {
    expect(parseGcLine('{"level":"info","msg":"ready"}', 1)).toBeUndefined();
    expect(parseGcLine(SCAVENGE.slice(0, 60), 1)).toBeUndefined();
  });
});

describe('a window of collections', () => {
  const young = (at: number, beforeMb: number, afterMb: number, pauseMs: number): GcEvent => ({
    at,
    kind: 'young',
    beforeMb,
    afterMb,
    pauseMs,
  });

  it('counts what was allocated and kept between young collections, and the time paused', () => {
    const events: GcEvent[] = [
      young(500, 90, 40, 99), // before the window
      young(1_000, 100, 50, 4),
      young(1_500, 100, 51, 6),
      young(2_000, 101, 52, 20),
      { at: 2_500, kind: 'full', beforeMb: 80, afterMb: 30, pauseMs: 30 },
      young(3_000, 80, 31, 10),
    ];
    const summary = summariseGc(events, 1_000, 3_000)!;
    expect(summary.youngPerSecond).toBe(2);
    expect(summary.youngPauseP50Ms).toBe(6);
    expect(summary.youngPauseMaxMs).toBe(20);
    expect(summary.pausedMsPerSecond).toBe((4 + 6 + 20 + 30 + 10) / 2);
    // 50 + 50 + 28 (to the full collection) + 50 (after it) MB over the 2 s from the first to the last.
    expect(summary.allocatedMbPerSecond).toBe(89);
    // The heap after them went 50 → 31 MB: a full collection between freed what had been kept.
    expect(summary.keptMbPerSecond).toBe(-9.5);
    expect(summary.fullCollections).toBe(1);
    expect(summary.fullPauseMaxMs).toBe(30);
  });

  it('has nothing to say of a window without collections', () => {
    expect(summariseGc([young(500, 90, 40, 9)], 1_000, 2_000)).toBeUndefined();
  });
});
