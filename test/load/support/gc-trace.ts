/**
 * A service's garbage collections as `node --trace-gc` prints them on its stdout, read by a
 * benchmark while it runs (`capacity.ts --gc`). Each line is stamped when the benchmark reads it,
 * so a level's window selects its collections on the benchmark's own clock. The pause is V8's
 * first figure, the time the collection held the main thread: every frame in the process waits
 * that long.
 */
import { percentile } from './stats.ts';

export interface GcEvent {
  /** Epoch ms when the line was read (performance.timeOrigin + performance.now()). */
  at: number;
  kind: 'young' | 'full';
  /** Heap in use before and after, MB. */
  beforeMb: number;
  afterMb: number;
  pauseMs: number;
}

export interface GcSummary {
  youngPerSecond: number;
  youngPauseP50Ms: number;
  youngPauseMaxMs: number;
  /** Main-thread time in collections of either kind, ms per second of the window. */
  pausedMsPerSecond: number;
  /** Allocated between collections, MB per second. */
  allocatedMbPerSecond: number;
  /**
   * How fast the heap left after each young collection grew, MB per second: what outlived the
   * young generation (kept for good, or copied to the old generation to die there).
   */
  keptMbPerSecond: number;
  fullCollections: number;
  fullPauseMaxMs: number;
}

// `[pid:0x…]   7619 ms: Scavenge 82.0 (121.0) -> 61.2 (187.7) MB, pooled: 0 MB, 17.80 / 0.02 ms …`
const LINE =
  /ms: (Scavenge|Minor Mark-Sweep|Mark-Compact|Mark-Sweep)\S*(?: \([^)]*\))? ([\d.]+) \([\d.]+\) -> ([\d.]+) \([\d.]+\) MB,(?: pooled: [\d.]+ MB,)? ([\d.]+) \//;

/** One `--trace-gc` line, or undefined for any other line (a log line, a partial read). */
export function parseGcLine(line: string, at: number): GcEvent | undefined {
  const match = LINE.exec(line);
  if (!match) return undefined;
  return {
    at,
    kind: match[1] === 'Scavenge' || match[1] === 'Minor Mark-Sweep' ? 'young' : 'full',
    beforeMb: Number(match[2]),
    afterMb: Number(match[3]),
    pauseMs: Number(match[4]),
  };
}

/** The collections in `[fromMs, toMs]` summarised; undefined when there were none. */
export function summariseGc(events: readonly GcEvent[], fromMs: number, toMs: number): GcSummary | undefined {
  const inWindow = events.filter((event) => event.at >= fromMs && event.at <= toMs);
  if (inWindow.length === 0) return undefined;
  const seconds = (toMs - fromMs) / 1000;
  const young = inWindow.filter((event) => event.kind === 'young');
  const full = inWindow.filter((event) => event.kind === 'full');
  const pauses = young.map((event) => event.pauseMs);
  // Allocated between one collection of either kind and the next.
  let allocated = 0;
  for (let index = 1; index < inWindow.length; index++)
    allocated += Math.max(0, inWindow[index]!.beforeMb - inWindow[index - 1]!.afterMb);
  const span = inWindow.length > 1 ? (inWindow.at(-1)!.at - inWindow[0]!.at) / 1000 : 0;
  const youngSpan = young.length > 1 ? (young.at(-1)!.at - young[0]!.at) / 1000 : 0;
  return {
    youngPerSecond: young.length / seconds,
    youngPauseP50Ms: pauses.length ? percentile(pauses, 50) : 0,
    youngPauseMaxMs: pauses.length ? Math.max(...pauses) : 0,
    pausedMsPerSecond: inWindow.reduce((sum, event) => sum + event.pauseMs, 0) / seconds,
    allocatedMbPerSecond: span > 0 ? allocated / span : 0,
    keptMbPerSecond: youngSpan > 0 ? (young.at(-1)!.afterMb - young[0]!.afterMb) / youngSpan : 0,
    fullCollections: full.length,
    fullPauseMaxMs: full.length ? Math.max(...full.map((event) => event.pauseMs)) : 0,
  };
}

/** Collects every service's collections from its stdout lines (`onServiceLine` of the stack). */
export function createGcRecorder(): {
  onLine(instanceId: string, line: string): void;
  events(instanceId: string): readonly GcEvent[];
} {
  const byInstance = new Map<string, GcEvent[]>();
  return {
    onLine(instanceId, line) {
      const event = parseGcLine(line, performance.timeOrigin + performance.now());
      if (!event) return;
      const events = byInstance.get(instanceId) ?? [];
      events.push(event);
      byInstance.set(instanceId, events);
    },
    events: (instanceId) => byInstance.get(instanceId) ?? [],
  };
}

/**
 * A table of each level's window for the named instances (e.g. `writer-4`, `gateway-6`), and the
 * same figures by level and instance for the benchmark's JSON line.
 */
export function gcFigures(
  recorder: ReturnType<typeof createGcRecorder>,
  windows: ReadonlyArray<{ level: number; fromMs: number; toMs: number }>,
  instances: readonly string[],
): { rows: Array<Array<string | number>>; json: Record<string, Record<string, GcSummary>> } {
  const rows: Array<Array<string | number>> = [
    [
      'runs',
      'process',
      'young/s',
      'pause p50',
      'pause max',
      'paused ms/s',
      'alloc MB/s',
      'kept MB/s',
      'full (max ms)',
    ],
  ];
  const json: Record<string, Record<string, GcSummary>> = {};
  const round = (value: number) => Math.round(value * 10) / 10;
  for (const window of windows) {
    for (const instance of instances) {
      const summary = summariseGc(recorder.events(instance), window.fromMs, window.toMs);
      if (!summary) continue;
      json[window.level] = { ...json[window.level], [instance]: summary };
      rows.push([
        window.level,
        instance,
        round(summary.youngPerSecond),
        round(summary.youngPauseP50Ms),
        round(summary.youngPauseMaxMs),
        round(summary.pausedMsPerSecond),
        round(summary.allocatedMbPerSecond),
        round(summary.keptMbPerSecond),
        `${summary.fullCollections} (${round(summary.fullPauseMaxMs)})`,
      ]);
    }
  }
  return { rows, json };
}
