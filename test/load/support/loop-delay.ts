import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { rounded, table } from './stats.ts';

/**
 * How late each process's event loop ran a ready callback over a benchmark's window: where a
 * frame queues on its way to the author. The services are started with `loop-monitor.mjs`
 * preloaded (`LOOP_MONITOR_FLAGS`); a SIGUSR2 when the window opens restarts their figures and
 * one when it closes makes each print the window's (`quill-loop {…}` on stdout). Not their
 * `/metrics` (the same figures, docs/operations.md "Metrics"): a scrape serialises every metric
 * on the loop it measures, tens of ms under load, which showed in the figures and the frames.
 * The benchmark's own client measures its loop in-process the same way. A sample is the time
 * between two ticks of a 10-ms timer, and what is kept is how late the tick came (the sample
 * less the 10 ms).
 */
export interface LoopDelay {
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  /** Share of the window the loop spent in callbacks (0–1; waiting for a core inside one counts). */
  utilization: number;
}

export const LOOP_MONITOR_FLAGS = [
  `--import=${fileURLToPath(new URL('./loop-monitor.mjs', import.meta.url))}`,
];
const SAMPLE_MS = 10;
const LINE = 'quill-loop ';

export interface LoopRecorder {
  /** The stack's `onServiceLine`. */
  onLine(instanceId: string, line: string): void;
  /** Opens a window once every service (by pid) and the client started their figures again. */
  open(pids: Record<string, number | undefined>): Promise<void>;
  /** Closes it and returns each process's figures, the client's as `bench-client`. */
  close(): Promise<Record<string, LoopDelay>>;
}

/** How long a service may take to answer a signal (its next turn) before it is left out. */
const ANSWER_WITHIN_MS = 5000;

export function createLoopRecorder(): LoopRecorder {
  const answers = new Map<string, LoopDelay>();
  let pids: Record<string, number> = {};
  const own = monitorEventLoopDelay({ resolution: SAMPLE_MS });
  let ownSince = performance.eventLoopUtilization();
  // Every service prints its figures since the previous signal and starts again; waiting for all
  // the answers keeps an opening's lines from being read as the closing's.
  const signalAll = async (): Promise<Map<string, LoopDelay>> => {
    answers.clear();
    for (const [instance, pid] of Object.entries(pids)) {
      try {
        process.kill(pid, 'SIGUSR2');
      } catch {
        delete pids[instance];
      }
    }
    const waitUntil = performance.now() + ANSWER_WITHIN_MS;
    while (performance.now() < waitUntil && Object.keys(pids).some((instance) => !answers.has(instance)))
      await new Promise((resolve) => setTimeout(resolve, 20));
    return new Map(answers);
  };
  return {
    onLine(instanceId, line) {
      if (line.startsWith(LINE)) answers.set(instanceId, JSON.parse(line.slice(LINE.length)) as LoopDelay);
    },
    async open(running) {
      pids = Object.fromEntries(
        Object.entries(running).filter((entry): entry is [string, number] => entry[1] !== undefined),
      );
      await signalAll();
      own.reset();
      own.enable();
      ownSince = performance.eventLoopUtilization();
    },
    async close() {
      own.disable();
      const late = (ns: number) => Math.max(0, ns / 1e6 - SAMPLE_MS);
      const figures: Record<string, LoopDelay> = {
        'bench-client': {
          p50Ms: late(own.percentile(50)),
          p99Ms: late(own.percentile(99)),
          maxMs: late(own.max),
          utilization: performance.eventLoopUtilization(ownSince).utilization,
        },
      };
      for (const [instance, delay] of await signalAll()) figures[instance] = delay;
      return figures;
    },
  };
}

/** One row per level and process on the token path (writers, gateways, router, the client). */
export function loopDelayTable(windows: Array<{ level: number; loops: Record<string, LoopDelay> }>): string {
  return table([
    ['runs', 'process', 'late p50 ms', 'late p99 ms', 'late max ms', 'loop busy'],
    ...windows.flatMap(({ level, loops }) =>
      Object.entries(loops)
        .filter(([instance]) => /^(writer|gateway|router)-|^bench-client$/.test(instance))
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([instance, delay]) => [
          level,
          instance,
          rounded(delay.p50Ms),
          rounded(delay.p99Ms),
          rounded(delay.maxMs),
          rounded(delay.utilization),
        ]),
    ),
  ]);
}
