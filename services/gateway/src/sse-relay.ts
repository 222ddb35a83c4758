import type { ServerResponse } from 'node:http';
import { type Bus, publishFrame, readOrdered } from '@quill/bus';
import {
  EventEnvelope,
  encodeSseComment,
  encodeSseFrame,
  errorFrame,
  frame,
  msgIds,
  SSE_HEADERS,
} from '@quill/contracts';
import type { FastifyBaseLogger as Logger } from 'fastify';
import type { RunWatch } from './run-watch.ts';

export interface RelayOptions {
  runId: string;
  /** Resume after this stream sequence (the client's Last-Event-ID); 0 = from the beginning. */
  afterSeq: number;
  heartbeatMs: number;
  /** Extra response headers, e.g. the trace id an operator can look the run up by. */
  headers?: Record<string, string>;
  watch: RunWatch;
  /**
   * When (epoch ms) this gateway ends the stream itself if no terminal frame arrived: the last
   * line of the terminal guarantee when no router is left to send one.
   */
  fallbackAt: number;
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
  const reader = await readOrdered(bus, {
    stream: bus.names.streams.events,
    subject: bus.names.events(runId),
    schema: EventEnvelope,
    startSeq: options.afterSeq + 1,
  });
  response.writeHead(200, { ...SSE_HEADERS, ...options.headers });
  response.flushHeaders();
  const watch = options.watch(runId);
  const heartbeat = setInterval(() => response.write(encodeSseComment('heartbeat')), options.heartbeatMs);
  // Both frames carry the run's fixed msg ids: if the router did send its own, these are dropped.
  const fallback = setTimeout(
    () => {
      logger.error({ run_id: runId }, 'no terminal frame by the deadline; ending the stream');
      void publishFrame(bus, errorFrame(runId, 'worker_lost'), { msgId: msgIds.terminal(runId) })
        .then(() => publishFrame(bus, frame('done', runId, {}), { msgId: msgIds.done(runId) }))
        .catch((error: unknown) => logger.error({ err: error }, 'fallback terminal failed'));
    },
    Math.max(0, options.fallbackAt - Date.now()),
  );
  const closeReader = () => void reader.close();
  response.once('close', closeReader);
  let sawDone = false;
  try {
    for await (const item of reader) {
      if (!item.envelope) {
        logger.error({ seq: item.seq, err: item.invalid }, 'invalid frame skipped');
        continue;
      }
      const written = response.write(encodeSseFrame(item.envelope.frame, item.seq));
      if (item.envelope.frame.type === 'done') {
        sawDone = true;
        break;
      }
      // A slow client must not make the gateway buffer a whole run in memory.
      if (!written && !response.destroyed) await drained(response);
      if (response.destroyed) break;
    }
  } finally {
    clearInterval(heartbeat);
    clearTimeout(fallback);
    response.off('close', closeReader);
    watch.detach(!sawDone);
    await reader.close();
    if (!response.destroyed) response.end();
  }
}

function drained(response: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      response.off('drain', done);
      response.off('close', done);
      resolve();
    };
    response.once('drain', done);
    response.once('close', done);
  });
}
