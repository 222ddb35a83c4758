import type { PubAck } from '@nats-io/jetstream';
import type { z } from 'zod';
import { encodeJson } from './codec.ts';
import type { Bus } from './connection.ts';
import { SpanKind, tracedHeaders, withSpan } from './tracing.ts';

export interface PublishOptions {
  /** `Nats-Msg-Id`: JetStream drops a second publish with the same id inside the duplicate window. */
  msgId?: string;
  /** Publishes without a span of its own: for high-rate frames inside an already traced step. */
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
  const send = () =>
    bus.js.publish(subject, data, {
      headers: tracedHeaders(),
      ...(options.msgId ? { msgID: options.msgId } : {}),
    });
  if (options.quiet) return send();
  return withSpan(
    `publish ${subjectFamily(subject)}`,
    {
      kind: SpanKind.PRODUCER,
      attributes: { 'messaging.system': 'nats', 'messaging.destination.name': subject },
    },
    send,
  );
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
