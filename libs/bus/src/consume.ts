import type { JsMsg } from '@nats-io/jetstream';
import type { Logger } from 'pino';
import type { z } from 'zod';
import { isTransientNatsError, retryWithBackoff } from './backoff.ts';
import { decodeEnvelope, InvalidEnvelopeError } from './codec.ts';
import type { Bus } from './connection.ts';
import { trackConsumer } from './consumer-lag.ts';
import { contextFromHeaders, SpanKind, withSpan } from './tracing.ts';

/** What to do with a message once its handler is done. */
export type Disposition =
  | { kind: 'ack' }
  | { kind: 'nak'; delayMs?: number }
  | { kind: 'term'; reason: string };
export const ack: Disposition = { kind: 'ack' };
export const nak = (delayMs?: number): Disposition =>
  delayMs === undefined ? { kind: 'nak' } : { kind: 'nak', delayMs };
export const term = (reason: string): Disposition => ({ kind: 'term', reason });

export interface DeliveryContext {
  readonly message: JsMsg;
  readonly subject: string;
  readonly deliveryCount: number;
  /**
   * The subject JetStream takes this delivery's acks on: another process that publishes `-NAK`
   * there hands the message back (router run leases, README "Fault tolerance").
   */
  readonly ackSubject: string;
  /** Aborted when this replica shuts down: a handler should hand its work back (nak) quickly. */
  readonly shutdown: AbortSignal;
}

export interface DurableConsumerOptions<S extends z.ZodType> {
  stream: string;
  consumer: string;
  schema: S;
  concurrency: number;
  logger: Logger;
  spanName: string;
  handle(envelope: z.infer<S>, context: DeliveryContext): Promise<Disposition>;
  /** Called after an invalid message was terminated, so the run it belongs to can be ended. */
  onInvalid?(subject: string, error: InvalidEnvelopeError): Promise<void>;
}

export interface ConsumerHandle {
  /** Stops pulling, signals in-flight handlers and waits for them. */
  stop(): Promise<void>;
  readonly inFlight: number;
}

/**
 * Pulls one message per free slot, so a replica never holds more than `concurrency` messages
 * (unprocessed prefetched messages would otherwise burn their ack_wait in a local buffer).
 */
export async function consumeDurable<S extends z.ZodType>(
  bus: Bus,
  options: DurableConsumerOptions<S>,
): Promise<ConsumerHandle> {
  // The look-up is a JetStream API call: on a starved start it used to time out and exit the
  // replica (README "Fault tolerance"); it waits for an answer instead.
  const consumer = await retryWithBackoff(() => bus.js.consumers.get(options.stream, options.consumer), {
    what: `JetStream consumer ${options.stream}/${options.consumer}`,
    logger: options.logger,
    retryable: isTransientNatsError,
  });
  trackConsumer(bus, options.stream, options.consumer);
  const shutdown = new AbortController();
  const running = new Set<Promise<void>>();
  let slotFreed: (() => void) | undefined;

  const process = async (message: JsMsg) => {
    const deliveryCount = message.info.deliveryCount;
    let envelope: z.infer<S>;
    try {
      envelope = decodeEnvelope(options.schema, message.subject, message.data);
    } catch (error) {
      if (!(error instanceof InvalidEnvelopeError)) throw error;
      options.logger.error({ subject: message.subject, issues: error.issues }, 'invalid envelope terminated');
      // No reason on the wire: nats-server 2.9 ignores `+TERM <reason>` and redelivers the message.
      message.term();
      await options.onInvalid?.(message.subject, error);
      return;
    }
    const parent = contextFromHeaders(message.headers);
    const disposition = await withSpan(
      options.spanName,
      {
        kind: SpanKind.CONSUMER,
        attributes: {
          'messaging.system': 'nats',
          'messaging.destination.name': message.subject,
          'messaging.nats.delivery_count': deliveryCount,
          ...runAttributes(envelope),
        },
        ...(parent ? { parent } : {}),
      },
      () =>
        options.handle(envelope, {
          message,
          subject: message.subject,
          deliveryCount,
          // The client's message keeps its reply subject (the ack subject); its type does not say so.
          ackSubject: (message as JsMsg & { reply?: string }).reply ?? '',
          shutdown: shutdown.signal,
        }),
    ).catch((error: unknown): Disposition => {
      options.logger.error(
        { err: error, subject: message.subject, deliveryCount },
        'handler failed; will retry',
      );
      return nak(1000);
    });
    if (disposition.kind === 'ack') await message.ackAck().catch(() => message.ack());
    else if (disposition.kind === 'term') {
      options.logger.warn({ subject: message.subject, reason: disposition.reason }, 'message terminated');
      message.term();
    } else message.nak(disposition.delayMs);
  };

  const loop = async () => {
    while (!shutdown.signal.aborted) {
      if (running.size >= options.concurrency) {
        await new Promise<void>((resolve) => {
          slotFreed = resolve;
        });
        continue;
      }
      // One pull for every free slot: a burst of messages arrives in one round trip instead of
      // one round trip each, and the replica still never holds more than `concurrency`.
      const stopBatch = () => batch?.stop();
      let batch: Awaited<ReturnType<typeof consumer.fetch>> | undefined;
      try {
        batch = await consumer.fetch({ max_messages: options.concurrency - running.size, expires: 2000 });
        shutdown.signal.addEventListener('abort', stopBatch, { once: true });
        for await (const message of batch) {
          if (shutdown.signal.aborted) {
            message.nak();
            continue;
          }
          start(message);
        }
      } catch (error) {
        if (shutdown.signal.aborted) break;
        options.logger.warn({ err: error, consumer: options.consumer }, 'pull failed; retrying');
        await new Promise((resolve) => setTimeout(resolve, 500));
      } finally {
        shutdown.signal.removeEventListener('abort', stopBatch);
      }
    }
  };
  const start = (message: JsMsg) => {
    const task = process(message).catch((error) =>
      options.logger.error({ err: error }, 'message processing crashed'),
    );
    running.add(task);
    void task.finally(() => {
      running.delete(task);
      slotFreed?.();
      slotFreed = undefined;
    });
  };
  const looping = loop();

  return {
    get inFlight() {
      return running.size;
    },
    async stop() {
      shutdown.abort();
      slotFreed?.();
      await looping;
      await Promise.allSettled(running);
    },
  };
}

/**
 * `quill.run_id`, `quill.session_id` and `quill.role` from an envelope that carries them, so a run
 * can be found in Jaeger by its id (docs/operations.md "Traces").
 */
export function runAttributes(envelope: unknown): Record<string, string> {
  if (typeof envelope !== 'object' || envelope === null) return {};
  const fields = envelope as Record<string, unknown>;
  const attributes: Record<string, string> = {};
  if (typeof fields.run_id === 'string') attributes['quill.run_id'] = fields.run_id;
  if (typeof fields.session_id === 'string') attributes['quill.session_id'] = fields.session_id;
  if (typeof fields.role === 'string') attributes['quill.role'] = fields.role;
  return attributes;
}
