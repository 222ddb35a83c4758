import type { ServerResponse } from 'node:http';
import type { Bus, RunRecordStart } from '@quill/bus';
import {
  encodeSseFrame,
  encodeSseRetry,
  localizeFrame,
  SSE_HEADERS,
  SSE_RETRY_MS,
  type SseFrame,
  type UiLanguage,
} from '@quill/contracts';
import { quillMetrics } from '@quill/telemetry';
import type { FastifyReply, FastifyBaseLogger as Logger } from 'fastify';
import type { Heartbeats } from './heartbeats.ts';
import { endRunIfUnfinished, type FallbackRequestOptions } from './run-fallback.ts';
import type { OwnFrame, RunFeeds } from './run-feed.ts';
import type { RunWatch } from './run-watch.ts';
import { drained, startSseResponse, writeSseEvent } from './sse-write.ts';

export interface RelayOptions {
  runId: string;
  /** Resume after this stream sequence (the client's Last-Event-ID); 0 = from the beginning. */
  afterSeq: number;
  /** The run's first frame, when this request stored it (a launch): not read back from EVENTS. */
  first?: OwnFrame;
  heartbeats: Heartbeats;
  /** Extra response headers, e.g. the trace id an operator can look the run up by. */
  headers?: Record<string, string | string[]>;
  watch: RunWatch;
  /**
   * When (epoch ms) this gateway ends the stream itself if no terminal frame arrived: the last
   * line of the terminal guarantee when no router is left to send one. Unset for a run that has
   * already ended.
   */
  fallbackAt?: number;
  /**
   * Where the run starts, for the fallback's read of what it stored: its `run_started`'s sequence
   * or its launch time (ISO), rather than EVENTS' first message (docs/decisions/0075, 0077).
   */
  runStart?: RunRecordStart;
  /** How the fallback asks the router to end the row of a run it ended. */
  endRequest: FallbackRequestOptions;
  /** This gateway's event tap, fanned out per run. */
  feeds: RunFeeds;
  /** The reader's language: `error` frames carry their message in it (docs/protocol.md). */
  language?: UiLanguage;
}

/**
 * Streams `run.<runId>.events` to one SSE response, from a sequence, until `done`. Each frame's
 * `id:` is its JetStream sequence, so any gateway replica can resume the stream exactly after
 * the last frame a client saw.
 */
export async function relayRunEvents(
  bus: Bus,
  response: ServerResponse,
  options: RelayOptions,
  logger: Logger,
): Promise<void> {
  const { runId } = options;
  // The run's frames come from this gateway's event tap (one consumer for every run), in memory.
  const reader = options.feeds.subscribe(runId, options.afterSeq, options.first);
  try {
    await reader.ready;
  } catch (error) {
    reader.close();
    throw error;
  }
  // The reconnect delay comes first, so a browser that loses the stream waits as told.
  startSseResponse(response, { ...SSE_HEADERS, ...options.headers }, encodeSseRetry(SSE_RETRY_MS));
  const watch = options.watch(runId);
  const stopHeartbeat = options.heartbeats.add(response);
  const fallback =
    options.fallbackAt === undefined
      ? undefined
      : setTimeout(
          () =>
            void endRunIfUnfinished(bus, runId, logger, options.endRequest, options.runStart).catch(
              (error: unknown) => logger.error({ err: error, run_id: runId }, 'fallback terminal failed'),
            ),
          Math.max(0, options.fallbackAt - Date.now()),
        );
  const closeReader = () => reader.close();
  response.once('close', closeReader);
  let sawDone = false;
  const metrics = quillMetrics();
  metrics.sseStreamsOpen.add(1);
  try {
    for await (const { item, sse } of reader) {
      if (!item.envelope || sse === undefined) {
        logger.error({ seq: item.seq, err: item.invalid }, 'invalid frame skipped');
        continue;
      }
      // Ended by a shutdown hand-off (heartbeats.handOff): writing after the end would be an error.
      if (response.writableEnded) break;
      const written = writeSseEvent(
        response,
        localized(item.envelope.frame, item.seq, sse, options.language),
      );
      // Fresh streams only: a resume replays stored frames, whose age is not the relay's delay.
      if (options.afterSeq === 0) metrics.frameDelay.record(frameAgeSeconds(item.envelope.frame.ts));
      if (item.envelope.frame.type === 'done') {
        sawDone = true;
        break;
      }
      // A slow client must not make the gateway buffer a whole run in memory.
      if (!written && !response.destroyed) await drained(response);
      if (response.destroyed) break;
    }
  } finally {
    metrics.sseStreamsOpen.add(-1);
    stopHeartbeat();
    clearTimeout(fallback);
    response.off('close', closeReader);
    watch.detach(!sawDone);
    reader.close();
    if (!response.destroyed) response.end();
  }
}

/**
 * What hooks have set on a reply (CORS), for a relay that writes the response head itself after
 * `reply.hijack()`.
 */
export function headersSetOn(reply: FastifyReply): Record<string, string | string[]> {
  const headers: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(reply.getHeaders())) {
    if (value !== undefined) headers[name] = typeof value === 'number' ? String(value) : value;
  }
  return headers;
}

/** The shared encoding, except an `error` frame whose message this reader reads in another language. */
function localized(value: SseFrame, seq: number, sse: string, language: UiLanguage | undefined): string {
  if (!language || value.type !== 'error') return sse;
  const shown = localizeFrame(value, language);
  return shown === value ? sse : encodeSseFrame(shown, seq);
}

function frameAgeSeconds(ts: string): number {
  return Math.max(0, (Date.now() - Date.parse(ts)) / 1000);
}
