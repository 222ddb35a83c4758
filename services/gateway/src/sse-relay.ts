import type { ServerResponse } from 'node:http';
import { type Bus, readOrdered } from '@quill/bus';
import { EventEnvelope, encodeSseComment, encodeSseFrame, SSE_HEADERS } from '@quill/contracts';
import type { FastifyBaseLogger as Logger } from 'fastify';

export interface RelayOptions {
  runId: string;
  /** Resume after this stream sequence (the client's Last-Event-ID); 0 = from the beginning. */
  afterSeq: number;
  heartbeatMs: number;
  /** Extra response headers, e.g. the trace id an operator can look the run up by. */
  headers?: Record<string, string>;
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
  const reader = await readOrdered(bus, {
    stream: bus.names.streams.events,
    subject: bus.names.events(options.runId),
    schema: EventEnvelope,
    startSeq: options.afterSeq + 1,
  });
  response.writeHead(200, { ...SSE_HEADERS, ...options.headers });
  response.flushHeaders();
  const heartbeat = setInterval(() => response.write(encodeSseComment('heartbeat')), options.heartbeatMs);
  const closeReader = () => void reader.close();
  response.once('close', closeReader);
  try {
    for await (const item of reader) {
      if (!item.envelope) {
        logger.error({ seq: item.seq, err: item.invalid }, 'invalid frame skipped');
        continue;
      }
      const written = response.write(encodeSseFrame(item.envelope.frame, item.seq));
      if (item.envelope.frame.type === 'done') break;
      // A slow client must not make the gateway buffer a whole run in memory.
      if (!written && !response.destroyed) await drained(response);
      if (response.destroyed) break;
    }
  } finally {
    clearInterval(heartbeat);
    response.off('close', closeReader);
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
