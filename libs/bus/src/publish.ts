import { randomUUID } from 'node:crypto';
import { type PubAck, PubHeaders } from '@nats-io/jetstream';
import { InvalidArgumentError, type MsgHdrs, MsgHdrsImpl } from '@nats-io/transport-node';
import type { z } from 'zod';
import { PublishAckError } from './acked-publisher.ts';
import { isTransientNatsError, type RetryLogger, retryWithBackoff } from './backoff.ts';
import { encodeJson } from './codec.ts';
import type { Bus } from './connection.ts';
import { SpanKind, tracedHeaders, traceHeaderEntries, withSpan } from './tracing.ts';

export interface PublishOptions {
  /** `Nats-Msg-Id`: JetStream drops a second publish with the same id inside the duplicate window. */
  msgId?: string;
  /**
   * For high-rate frames inside an already traced step: no span of its own, and sent in
   * batches with the other quiet publishes of this connection, in order (see `inNextBatch`).
   */
  quiet?: boolean;
  /**
   * With `quiet`: no `traceparent` header either. For a worker's streamed frames, one per token:
   * nothing reads a trace from them (a run's trace is read from its first frame, `run-trace.ts`),
   * and the header was a fifth of what a text frame keeps in the stream and every gateway receives
   * (docs/decisions/0049-streamed-frames-without-trace-headers.md).
   */
  untraced?: boolean;
}

/**
 * Validates the envelope before it leaves (a producer bug must fail here, not in every consumer)
 * and publishes to JetStream with trace headers. Every publish carries a `Nats-Msg-Id` (the
 * caller's, or one made here), so one whose ack was lost with a restarting broker is sent again
 * until `bus.publishRetry.deadlineMs` and stored once (README "Fault tolerance").
 */
export function publishEnvelope<S extends z.ZodType>(
  bus: Bus,
  subject: string,
  schema: S,
  body: z.input<S>,
  options: PublishOptions = {},
): Promise<PubAck> {
  if (!options.quiet) return publishTraced(bus, subject, schema, body, options.msgId);
  // A quiet publish is one promise, the one returned (docs/decisions/0079): not an async
  // function's, whose result would wrap this one. What the checks throw is its rejection.
  let data: Uint8Array;
  let headers: MsgHdrs;
  try {
    data = encodeJson(schema.parse(body));
    // The caller's trace context is read now: the deferred send runs in another one.
    headers = quietHeaders(options.msgId ?? randomUUID(), options.untraced !== true);
  } catch (error) {
    return Promise.reject(error);
  }
  return inNextBatch(bus, subject, data, headers);
}

async function publishTraced<S extends z.ZodType>(
  bus: Bus,
  subject: string,
  schema: S,
  body: z.input<S>,
  callerMsgId: string | undefined,
): Promise<PubAck> {
  const data = encodeJson(schema.parse(body));
  const msgId = callerMsgId ?? randomUUID();
  return withSpan(
    `publish ${subjectFamily(subject)}`,
    {
      kind: SpanKind.PRODUCER,
      attributes: { 'messaging.system': 'nats', 'messaging.destination.name': subject },
    },
    () => {
      const headers = tracedHeaders();
      return retryLostPublish(bus, subject, bus.logger, () =>
        bus.js.publish(subject, data, { headers, msgID: msgId, timeout: bus.publishRetry.ackTimeoutMs }),
      );
    },
  );
}

/** What nats.js refuses in a header value: it would end the header block early. */
const LINE_BREAK = /[\r\n]/;

/**
 * A quiet publish's headers, made as one record. Built header by header, nats.js checks each
 * name (canonicalised) and value (a regular expression made per call) and looks the name up
 * twice: ~1–2 µs of the ~24 µs a worker spends on a streamed frame (README "Performance", the
 * hot-path notes). The names here are fixed and the trace values the propagator's; the id is
 * checked once for what the header block cannot carry.
 */
function quietHeaders(msgId: string, traced: boolean): MsgHdrs {
  if (LINE_BREAK.test(msgId)) throw InvalidArgumentError.format('header', 'values cannot contain \\r or \\n');
  if (!traced) return new MsgIdHeader(msgId);
  const record: Record<string, string[]> = {};
  for (const [key, value] of traceHeaderEntries()) record[key] = [value];
  record[PubHeaders.MsgIdHdr] = [msgId];
  return MsgHdrsImpl.fromRecord(record);
}

/**
 * A streamed frame's only header, its `Nats-Msg-Id`, with the header block built once as one
 * string. The client's `encode()` joins the block line by line and encodes it with a
 * `TextEncoder` (a buffer of its own per call): ~1.2 µs a frame against ~0.4 here
 * (docs/decisions/0074-a-streamed-frames-header-block-made-once.md). The bytes are the client's
 * to the byte (`libs/bus/test/msg-id-header.test.ts`), and the id is in the map for any reader.
 */
export class MsgIdHeader extends MsgHdrsImpl {
  readonly #block: Uint8Array;
  constructor(msgId: string) {
    super();
    this.headers.set(PubHeaders.MsgIdHdr, [msgId]);
    this.#block = Buffer.from(`NATS/1.0\r\n${PubHeaders.MsgIdHdr}: ${msgId}\r\n\r\n`, 'utf8');
  }
  override encode(): Uint8Array {
    return this.#block;
  }
}

/** Sends a publish again (same bytes, same Msg-Id) while its ack is lost, until the deadline. */
function retryLostPublish(
  bus: Bus,
  subject: string,
  logger: RetryLogger | undefined,
  send: () => Promise<PubAck>,
  startedAt?: number,
): Promise<PubAck> {
  return retryWithBackoff(send, {
    // Only logged: quiet publishes (one per frame) log nothing, so their subject is not rewritten.
    what: logger ? `the ack of a publish to ${subjectFamily(subject)}` : 'the ack of a publish',
    logger,
    initialDelayMs: 100,
    maxDelayMs: 1000,
    deadlineMs: bus.publishRetry.deadlineMs,
    startedAt,
    retryable: (error) => !bus.connection.isClosed() && isLostPublish(error),
  });
}

/**
 * An ack that did not come or a broker that was not there (restarting, JetStream recovering):
 * another attempt may be stored. A refusal by the stream (limits, a wrong sequence) is an answer.
 */
function isLostPublish(error: unknown): boolean {
  if (error instanceof PublishAckError) return /timeout|no stream|connection closed/.test(error.message);
  return isTransientNatsError(error) || /503/.test((error as Error)?.message ?? '');
}

/** The longest a quiet publish waits for the previous batch's acks before it goes anyway. */
const MAX_HOLD_MS = 2;

/**
 * Sends quiet publishes in batches, in order. A worker streaming many runs receives their tokens
 * in separate socket reads; sent one by one, every frame costs the client a socket write and the
 * server a read and an ack write of its own. Here a publish goes out at the end of the current
 * event-loop turn when nothing is awaiting acks (no added delay when idle); while a batch is in
 * flight, frames collect until its acks are back (at most MAX_HOLD_MS), so under load many frames
 * share one write and one read, and the busier it gets the bigger the batches.
 */
function inNextBatch(bus: Bus, subject: string, data: Uint8Array, headers: MsgHdrs): Promise<PubAck> {
  const state = bus.state.batches;
  return new Promise<PubAck>((resolve, reject) => {
    state.queue.push({ subject, data, headers, resolve, reject });
    if (state.scheduled || state.timer) return;
    if (state.inFlight === 0) sendSoon(bus);
    else state.timer = setTimeout(() => sendBatch(bus), MAX_HOLD_MS);
  });
}

function sendSoon(bus: Bus): void {
  bus.state.batches.scheduled = true;
  setImmediate(() => sendBatch(bus));
}

/**
 * Sends the queued publishes. Each is told its ack through the publisher's callback, and the batch
 * counts its answers down: a promise per publish, the retry loop's on every first attempt and an
 * `allSettled` over the batch were several promises per streamed token (docs/decisions/0079). A
 * publish whose ack was lost enters the retry loop then, its deadline counted from this send;
 * the batch is answered once that loop ends, as before.
 */
function sendBatch(bus: Bus): void {
  const state = bus.state.batches;
  state.scheduled = false;
  clearTimeout(state.timer);
  state.timer = undefined;
  const batch = state.queue;
  if (batch.length === 0) return;
  state.queue = [];
  state.inFlight++;
  let open = batch.length;
  const answered = () => {
    if (--open > 0) return;
    state.inFlight--;
    if (state.queue.length > 0 && state.inFlight === 0 && !state.scheduled) sendSoon(bus);
  };
  const publisher = bus.state.ackedPublisher();
  const startedAt = Date.now();
  for (const entry of batch) {
    const { subject, data, headers } = entry;
    publisher.send(subject, data, headers, (error, ack) => {
      if (!error) {
        entry.resolve(ack!);
        answered();
        return;
      }
      // Frames are many: their retries are not logged one by one.
      let first = true;
      const again = () => {
        if (!first) return publisher.publish(subject, data, headers);
        first = false;
        return Promise.reject(error);
      };
      retryLostPublish(bus, subject, undefined, again, startedAt)
        .then(entry.resolve, entry.reject)
        .finally(answered);
    });
  }
}

/** Core NATS publish (not persisted): the stop broadcast. */
export function publishCore<S extends z.ZodType>(
  bus: Bus,
  subject: string,
  schema: S,
  body: z.input<S>,
): void {
  bus.connection.publish(subject, encodeJson(schema.parse(body)), { headers: tracedHeaders() });
}

/** `run.<id>.events` → `run.*.events`, so span names stay low-cardinality. */
export function subjectFamily(subject: string): string {
  return subject.replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, '*');
}
