import { performance } from 'node:perf_hooks';

/** The coalescing window text frames use right now, read at every delta. */
export interface FlushWindow {
  readonly ms: number;
  close(): void;
}

/** Below this event-loop utilisation the process has room: frames go out at the base window. */
const ROOMY = 0.6;
/** From here on the window is at its maximum. */
const SATURATED = 0.9;

/**
 * The text flush window of one worker process. While its event loop has room the window is
 * `baseMs` (a delta after an idle gap goes at once; at 20 tokens/s every token is its own frame).
 * As the loop saturates (hundreds of streams on one replica) it stretches towards `maxMs`: a frame
 * costs this process, JetStream and every gateway about the same whatever it carries, so more
 * tokens per frame is what keeps every stream's delay bounded when the machine is full. The
 * newest token of a frame is never held (see the emitter); older ones wait at most the window.
 */
export function createFlushWindow(settings: {
  baseMs: number;
  maxMs: number;
  sampleMs?: number;
}): FlushWindow {
  if (settings.maxMs <= settings.baseMs) {
    return { ms: settings.baseMs, close: () => undefined };
  }
  let ms = settings.baseMs;
  let previous = performance.eventLoopUtilization();
  const timer = setInterval(() => {
    const current = performance.eventLoopUtilization();
    const busy = performance.eventLoopUtilization(current, previous).utilization;
    previous = current;
    // Eased, so one busy sample (a GC pause, a burst of run starts) does not swing every stream.
    ms += 0.5 * (windowFor(busy, settings) - ms);
  }, settings.sampleMs ?? 250);
  timer.unref();
  return {
    get ms() {
      return ms;
    },
    close: () => clearInterval(timer),
  };
}

/** Linear from `baseMs` at ROOMY utilisation to `maxMs` at SATURATED. */
export function windowFor(utilization: number, settings: { baseMs: number; maxMs: number }): number {
  if (utilization <= ROOMY) return settings.baseMs;
  if (utilization >= SATURATED) return settings.maxMs;
  return settings.baseMs + ((utilization - ROOMY) / (SATURATED - ROOMY)) * (settings.maxMs - settings.baseMs);
}
