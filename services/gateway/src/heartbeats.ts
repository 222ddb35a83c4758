import type { ServerResponse } from 'node:http';
import { encodeSseComment, encodeSseRetry } from '@quill/contracts';
import { writeSseEvent } from './sse-write.ts';

/** Each open stream beats in one slice of the interval, so beats are spread over it. */
const SLICES = 10;

export interface Heartbeats {
  /** Starts beating on `response`; the returned function stops. */
  add(response: ServerResponse): () => void;
  /**
   * Tells every open stream to reconnect after `retryMs` (SSE `retry:`) and ends it: a gateway
   * that is shutting down hands its clients to the others, which resume each one exactly after
   * its Last-Event-ID (README "Fault tolerance"). Returns how many streams it ended.
   */
  handOff(retryMs: number): number;
  close(): void;
}

/**
 * One timer for the heartbeats of every open stream on this gateway. Thousands of idle streams
 * would otherwise each hold an interval timer and a closure; and spreading them over slices keeps
 * a gateway from writing to all of them in the same tick.
 */
export function createHeartbeats(intervalMs: number): Heartbeats {
  const slices = Array.from({ length: SLICES }, () => new Set<ServerResponse>());
  const beat = encodeSseComment('heartbeat');
  let nextSlice = 0;
  let tick = 0;
  const timer = setInterval(
    () => {
      for (const response of slices[tick]!) if (!response.destroyed) writeSseEvent(response, beat);
      tick = (tick + 1) % SLICES;
    },
    Math.max(1, Math.floor(intervalMs / SLICES)),
  );
  timer.unref();
  return {
    add(response) {
      const slice = slices[nextSlice]!;
      nextSlice = (nextSlice + 1) % SLICES;
      slice.add(response);
      return () => slice.delete(response);
    },
    handOff(retryMs) {
      const retry = encodeSseRetry(retryMs);
      let ended = 0;
      for (const slice of slices) {
        for (const response of slice) {
          if (!response.destroyed) {
            response.end(retry);
            ended++;
          }
        }
        slice.clear();
      }
      return ended;
    },
    close: () => clearInterval(timer),
  };
}
