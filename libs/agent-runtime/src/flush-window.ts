import { performance } from 'node:perf_hooks';

/** The coalescing window text frames use right now (a token's longest wait), read at every delta. */
export interface FlushWindow {
  readonly ms: number;
  close(): void;
}

/** Below this event-loop utilisation the process has room: frames go out at the base window. */
const ROOMY = 0.6;
/** From here on the window is at its maximum. */
const SATURATED = 0.9;

/**
 * The text flush window of one worker process: the most a token waits in a frame for newer ones
 * (the emitter bounds every token's age by it, see frame-emitter.ts). While the process has room
 * the window is `baseMs` (at 20 tokens/s every token is its own frame). Once the process itself
 * is saturated (hundreds of streams on one replica) it stretches towards `maxMs`: a frame costs
 * this process, JetStream and every gateway about the same whatever it carries, so more tokens
 * per frame is what keeps every stream's delay bounded when the worker is full
 * (docs/decisions/0031-token-age-coalescing.md).
 *
 * Saturated means the event loop is busy AND the process burns the CPU it is busy with: on a
 * shared machine a process that waits for a core looks busy to the event loop alone, and
 * stretching its window then only delays tokens without saving it anything.
 */
export function createFlushWindow(settings: {
  baseMs: number;
  maxMs: number;
  sampleMs?: number;
  /** How saturated the process was since the last call, 0..1 (tests script it). */
  measure?: () => number;
}): FlushWindow {
  if (settings.maxMs <= settings.baseMs) {
    return { ms: settings.baseMs, close: () => undefined };
  }
  let ms = settings.baseMs;
  const measure = settings.measure ?? processSaturation();
  const timer = setInterval(() => {
    // Eased, so one busy sample (a GC pause, a burst of run starts) does not swing every stream.
    ms += 0.5 * (windowFor(measure(), settings) - ms);
  }, settings.sampleMs ?? 250);
  timer.unref();
  return {
    get ms() {
      return ms;
    },
    close: () => clearInterval(timer),
  };
}

/** The lower of the event loop's utilisation and the cores this process used, since the last call. */
function processSaturation(): () => number {
  let previous = performance.eventLoopUtilization();
  let previousCpu = process.cpuUsage();
  let previousAt = performance.now();
  return () => {
    const current = performance.eventLoopUtilization();
    const busy = performance.eventLoopUtilization(current, previous).utilization;
    const cpu = process.cpuUsage(previousCpu);
    const now = performance.now();
    const cores = (cpu.user + cpu.system) / 1000 / Math.max(1, now - previousAt);
    previous = current;
    previousCpu = process.cpuUsage();
    previousAt = now;
    return Math.min(busy, cores);
  };
}

/** Linear from `baseMs` at ROOMY utilisation to `maxMs` at SATURATED. */
export function windowFor(utilization: number, settings: { baseMs: number; maxMs: number }): number {
  if (utilization <= ROOMY) return settings.baseMs;
  if (utilization >= SATURATED) return settings.maxMs;
  return settings.baseMs + ((utilization - ROOMY) / (SATURATED - ROOMY)) * (settings.maxMs - settings.baseMs);
}
