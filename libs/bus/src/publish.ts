import { type PubAck, PubHeaders } from '@nats-io/jetstream';
import type { MsgHdrs } from '@nats-io/transport-node';
import type { z } from 'zod';
import { type AckedPublisher, createAckedPublisher } from './acked-publisher.ts';
import { encodeJson } from './codec.ts';
import type { Bus } from './connection.ts';
import { SpanKind, tracedHeaders, withSpan } from './tracing.ts';

export interface PublishOptions {
  /** `Nats-Msg-Id`: JetStream drops a second publish with the same id inside the duplicate window. */
  msgId?: string;
  /**
   * For high-rate frames inside an already traced step: no span of its own, and sent in
   * batches with the other quiet publishes of this connection, in order (see `inNextBatch`).
   */
  quiet?: boolean;
}

/**
 * Validates the envelope before it leaves (a producer bug must fail here, not in every consumer)
 * and publishes to JetStream with trace headers.
 */
export async function publishEnvelope<S extends z.ZodType>(
  bus: Bus,
  subject: string,
  schema: S,
  body: z.input<S>,
  options: PublishOptions = {},
): Promise<PubAck> {
  const data = encodeJson(schema.parse(body));
  const send = (headers: MsgHdrs) =>
    bus.js.publish(subject, data, {
      headers,
      ...(options.msgId ? { msgID: options.msgId } : {}),
    });
  if (options.quiet) {
    // The caller's trace context is read now: the deferred send runs in another one.
    const headers = tracedHeaders();
    if (options.msgId) headers.set(PubHeaders.MsgIdHdr, options.msgId);
    const publisher = ackedPublisherFor(bus);
    return inNextBatch(bus, () => publisher.publish(subject, data, headers));
  }
  return withSpan(
    `publish ${subjectFamily(subject)}`,
    {
      kind: SpanKind.PRODUCER,
      attributes: { 'messaging.system': 'nats', 'messaging.destination.name': subject },
    },
    () => send(tracedHeaders()),
  );
}

/** How long a quiet publish waits for its ack; the JetStream client's default. */
const QUIET_ACK_TIMEOUT_MS = 5000;
const publishers = new WeakMap<Bus, AckedPublisher>();

function ackedPublisherFor(bus: Bus): AckedPublisher {
  let publisher = publishers.get(bus);
  if (!publisher) {
    publisher = createAckedPublisher(bus.connection, { timeoutMs: QUIET_ACK_TIMEOUT_MS });
    publishers.set(bus, publisher);
  }
  return publisher;
}

interface PublishBatches {
  queue: Array<() => Promise<unknown>>;
  /** Batches sent whose acks have not all come back. */
  inFlight: number;
  scheduled: boolean;
  timer: NodeJS.Timeout | undefined;
}

const batchesByBus = new WeakMap<Bus, PublishBatches>();
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
function inNextBatch<T>(bus: Bus, send: () => Promise<T>): Promise<T> {
  let batches = batchesByBus.get(bus);
  if (!batches) {
    batches = { queue: [], inFlight: 0, scheduled: false, timer: undefined };
    batchesByBus.set(bus, batches);
  }
  const state = batches;
  return new Promise<T>((resolve, reject) => {
    state.queue.push(() => send().then(resolve, reject));
    if (state.scheduled || state.timer) return;
    if (state.inFlight === 0) sendSoon(state);
    else state.timer = setTimeout(() => sendBatch(state), MAX_HOLD_MS);
  });
}

function sendSoon(state: PublishBatches): void {
  state.scheduled = true;
  setImmediate(() => sendBatch(state));
}

function sendBatch(state: PublishBatches): void {
  state.scheduled = false;
  clearTimeout(state.timer);
  state.timer = undefined;
  const batch = state.queue;
  if (batch.length === 0) return;
  state.queue = [];
  state.inFlight++;
  void Promise.allSettled(batch.map((run) => run())).then(() => {
    state.inFlight--;
    if (state.queue.length > 0 && state.inFlight === 0 && !state.scheduled) sendSoon(state);
  });
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
