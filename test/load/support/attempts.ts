import type { MachineTicks } from './proc.ts';

/** The part of one level of `capacity.ts`'s JSON line that an attempt summary reads. */
export interface CapacityLevel {
  level: number;
  failures: number;
  frame_p99_ms: number;
  token_p99_ms: number;
  machine_cpu_cores: number;
  tokens_received_per_second: number;
  load_average: number;
}

/** One `capacity.ts` run: the levels it measured, in order (it stops at the first that did not hold). */
export interface CapacityRun {
  limit_ms: number;
  levels: CapacityLevel[];
}

export interface LevelSummary {
  level: number;
  /** Attempts that measured this level (a run stops at its first level that did not hold). */
  measured: number;
  held: number;
  frameP99Ms: number[];
  tokenP99Ms: number[];
  /** The whole machine's CPU per streamed token, µs: what sets the level on a shared machine. */
  machineUsPerToken: number[];
  loads: number[];
}

/** capacity.ts's own rule: no run failed and the frame p99 is within the limit. */
export function levelHeld(level: CapacityLevel, limitMs: number): boolean {
  return level.failures === 0 && level.frame_p99_ms <= limitMs;
}

/** Per level, over every attempt: how often it held, and the figures of each attempt that measured it. */
export function summarizeAttempts(levels: readonly number[], runs: readonly CapacityRun[]): LevelSummary[] {
  return levels.map((level) => {
    const measured = runs.flatMap((run) =>
      run.levels.filter((entry) => entry.level === level).map((entry) => ({ entry, limit: run.limit_ms })),
    );
    return {
      level,
      measured: measured.length,
      held: measured.filter(({ entry, limit }) => levelHeld(entry, limit)).length,
      frameP99Ms: measured.map(({ entry }) => entry.frame_p99_ms),
      tokenP99Ms: measured.map(({ entry }) => entry.token_p99_ms),
      machineUsPerToken: measured.map(
        ({ entry }) => (entry.machine_cpu_cores * 1e6) / Math.max(1, entry.tokens_received_per_second),
      ),
      loads: measured.map(({ entry }) => entry.load_average),
    };
  });
}

/** `min–max` of a level's figures over its attempts (one figure alone as itself). */
export function spread(values: readonly number[], digits = 0): string {
  if (values.length === 0) return '-';
  const min = Math.min(...values);
  const max = Math.max(...values);
  return min === max ? min.toFixed(digits) : `${min.toFixed(digits)}–${max.toFixed(digits)}`;
}

/** The share of the machine's CPU time spent idle (or in iowait) between two `machineTicks` readings. */
export function idleShare(before: MachineTicks, after: MachineTicks): number {
  const total = after.total - before.total;
  if (total <= 0) return 1;
  return (total - (after.busy - before.busy)) / total;
}
