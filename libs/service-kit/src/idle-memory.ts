import { performance } from 'node:perf_hooks';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/**
 * Gives memory back once a process has gone quiet (docs/decisions/0040-compile-cache-and-idle-memory.md).
 * V8 sizes its young generation to the allocation rate it sees: start-up and every burst of runs
 * grow it to its maximum, and a quiet process keeps those pages (~40 MB of a worker's resident
 * set). V8 has a memory reducer for exactly this, but it acts on an embedder's idle notifications,
 * which Node never sends; a memory-reducing full collection is what it would run. Capping the
 * young generation instead (`--max-semi-space-size`) costs CPU on every streamed token; this
 * costs one collection per quiet spell, none while work goes on, and a warm-up of the next burst
 * while the young generation grows back (why the spell is half a minute by default).
 */

/** Event-loop utilization below which a one-second sample counts as quiet. */
export const QUIET_UTILIZATION = 0.02;
/** How much the heap must have grown since the last reduction for another one to be worth it. */
export const HEAP_GROWTH_BYTES = 8 * 1024 * 1024;

export interface IdleMemoryState {
  /** The heap's size right after the last reduction; undefined until the first one. */
  readonly heapAfterReduceBytes: number | undefined;
  /** How long the event loop has been quiet, in sampled time. */
  readonly quietMs: number;
}

export interface IdleMemorySample {
  /** Event-loop utilization over the sample (0–1). */
  readonly utilization: number;
  readonly elapsedMs: number;
  readonly heapTotalBytes: number;
}

export const INITIAL_IDLE_MEMORY_STATE: IdleMemoryState = { heapAfterReduceBytes: undefined, quietMs: 0 };

/**
 * Whether to reduce now: the loop has been quiet for `quietAfterMs` and there is something to
 * give back (the first quiet spell after start-up, or the heap grew since the last reduction).
 * Any busy sample restarts the quiet spell, so a reduction never lands in the middle of work.
 */
export function idleMemoryStep(
  state: IdleMemoryState,
  sample: IdleMemorySample,
  quietAfterMs: number,
): { readonly state: IdleMemoryState; readonly reduce: boolean } {
  if (sample.utilization >= QUIET_UTILIZATION) return { state: { ...state, quietMs: 0 }, reduce: false };
  const quietMs = state.quietMs + sample.elapsedMs;
  const grown =
    state.heapAfterReduceBytes === undefined ||
    sample.heapTotalBytes - state.heapAfterReduceBytes >= HEAP_GROWTH_BYTES;
  return { state: { ...state, quietMs }, reduce: grown && quietMs >= quietAfterMs };
}

export interface MemoryReduction {
  readonly rssBeforeBytes: number;
  readonly rssAfterBytes: number;
  readonly heapBeforeBytes: number;
  readonly heapAfterBytes: number;
  readonly pauseMs: number;
}

type GcFunction = (options?: { type: 'major'; execution: 'sync'; flavor: 'last-resort' }) => void;

/**
 * V8's collection function without `--expose-gc` on the command line (which a deployment's
 * command would have to carry): the flag set at run time exposes it to new contexts only, so the
 * service's own global stays as it was.
 */
function memoryReducingGc(): () => void {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as GcFunction;
  // "last-resort" is V8's memory-reducing full collection: it shrinks the young generation and
  // compacts the old one, where a plain major collection keeps both sizes.
  return () => gc({ type: 'major', execution: 'sync', flavor: 'last-resort' });
}

/**
 * Samples the event loop once a second and reduces memory when `idleMemoryStep` says so. The
 * timer is unref'd: it never keeps a stopping process alive. Returns the stop function.
 */
export function startIdleMemoryReducer(options: {
  readonly quietAfterMs: number;
  readonly onReduced: (reduction: MemoryReduction) => void;
  readonly sampleMs?: number;
}): () => void {
  const collect = memoryReducingGc();
  const sampleMs = options.sampleMs ?? 1000;
  let state = INITIAL_IDLE_MEMORY_STATE;
  let lastLoop = performance.eventLoopUtilization();
  let lastAt = performance.now();
  const timer = setInterval(() => {
    const now = performance.now();
    const loop = performance.eventLoopUtilization(lastLoop);
    lastLoop = performance.eventLoopUtilization();
    const before = process.memoryUsage();
    const step = idleMemoryStep(
      state,
      { utilization: loop.utilization, elapsedMs: now - lastAt, heapTotalBytes: before.heapTotal },
      options.quietAfterMs,
    );
    lastAt = now;
    state = step.state;
    if (!step.reduce) return;
    const started = performance.now();
    collect();
    const pauseMs = performance.now() - started;
    const after = process.memoryUsage();
    state = { heapAfterReduceBytes: after.heapTotal, quietMs: 0 };
    // The collection itself is not work: the next sample starts after it.
    lastLoop = performance.eventLoopUtilization();
    lastAt = performance.now();
    options.onReduced({
      rssBeforeBytes: before.rss,
      rssAfterBytes: after.rss,
      heapBeforeBytes: before.heapTotal,
      heapAfterBytes: after.heapTotal,
      pauseMs,
    });
  }, sampleMs);
  timer.unref();
  return () => clearInterval(timer);
}
