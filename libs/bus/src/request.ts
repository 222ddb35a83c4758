import type { Msg } from '@nats-io/transport-node';
import type { Logger } from 'pino';
import type { z } from 'zod';
import { decodeEnvelope, encodeJson, InvalidEnvelopeError } from './codec.ts';
import type { Bus } from './connection.ts';
import { overlappingAttempts } from './overlapping-attempts.ts';
import { contextFromHeaders, SpanKind, tracedHeaders, withSpan } from './tracing.ts';

/** A request/reply call failed before a valid reply arrived (no responders, timeout, bad reply). */
export class BusRequestError extends Error {
  readonly subject: string;
  readonly kind: 'no_responders' | 'timeout' | 'invalid_reply';
  constructor(subject: string, kind: BusRequestError['kind'], options?: { cause?: unknown }) {
    super(`request to ${subject} failed: ${kind}`, options);
    this.name = new.target.name;
    this.subject = subject;
    this.kind = kind;
  }
}

export interface RequestOptions<R> {
  /**
   * How long one attempt waits for its reply alone; with a deadline, the next attempt then starts
   * beside it and the earlier one keeps listening (overlapping-attempts.ts).
   */
  timeoutMs: number;
  /**
   * How long all attempts together may take (default: one attempt). Within it, a request that
   * found no responder, was not answered within `timeoutMs`, or got a reply `retryReply` calls a
   * replica's failure is asked again with backoff: a queue group hands the next attempt to a
   * replica that is alive, and a slow replica's late answer still counts. Only for idempotent
   * requests (every request on Quill's bus is, README "Fault tolerance").
   */
  deadlineMs?: number;
  retryReply?: (reply: R) => boolean;
}

/** A reply that says the replica failed, kept so the last one can be returned at the deadline. */
class RetryableReply<R> extends Error {
  readonly reply: R;
  constructor(subject: string, reply: R) {
    super(`request to ${subject} answered with a replica failure`);
    this.name = new.target.name;
    this.reply = reply;
  }
}

export async function requestReply<Q extends z.ZodType, R extends z.ZodType>(
  bus: Bus,
  subject: string,
  schemas: { request: Q; reply: R },
  body: z.input<Q>,
  options: RequestOptions<z.infer<R>>,
): Promise<z.infer<R>> {
  const data = encodeJson(schemas.request.parse(body));
  return withSpan(
    `request ${subject}`,
    {
      kind: SpanKind.CLIENT,
      attributes: { 'messaging.system': 'nats', 'messaging.destination.name': subject },
    },
    async () => {
      const deadlineMs = options.deadlineMs ?? 0;
      const attempt = async (listenMs: number): Promise<z.infer<R>> => {
        const reply = await requestOnce(bus, subject, schemas.reply, data, listenMs);
        if (options.retryReply?.(reply)) throw new RetryableReply(subject, reply);
        return reply;
      };
      if (deadlineMs <= options.timeoutMs && !options.retryReply) return attempt(options.timeoutMs);
      try {
        return await overlappingAttempts(attempt, {
          what: `a reply on ${subject}`,
          logger: bus.logger,
          patienceMs: options.timeoutMs,
          deadlineMs: Math.max(deadlineMs, options.timeoutMs),
          initialDelayMs: 100,
          maxDelayMs: 2000,
          retryable: (error) =>
            error instanceof RetryableReply ||
            (error instanceof BusRequestError && error.kind !== 'invalid_reply'),
        });
      } catch (error) {
        // The deadline passed while replicas kept failing: their last answer is the answer.
        if (error instanceof RetryableReply) return error.reply as z.infer<R>;
        throw error;
      }
    },
  );
}

async function requestOnce<R extends z.ZodType>(
  bus: Bus,
  subject: string,
  schema: R,
  data: Uint8Array,
  timeoutMs: number,
): Promise<z.infer<R>> {
  let reply: Msg;
  try {
    reply = await bus.connection.request(subject, data, { timeout: timeoutMs, headers: tracedHeaders() });
  } catch (cause) {
    const text = String((cause as Error)?.message ?? cause);
    throw new BusRequestError(subject, /no responders/i.test(text) ? 'no_responders' : 'timeout', {
      cause,
    });
  }
  try {
    return decodeEnvelope(schema, subject, reply.data);
  } catch (cause) {
    throw new BusRequestError(subject, 'invalid_reply', { cause });
  }
}

export interface Responder {
  stop(): Promise<void>;
}

/**
 * Serves a request/reply subject in a queue group, so every replica shares the load. The handler
 * must return a reply envelope; an invalid request gets `invalidReply` (logged with its subject).
 */
export function serveRequests<Q extends z.ZodType, R extends z.ZodType>(
  bus: Bus,
  subject: string,
  schemas: { request: Q; reply: R },
  handlers: {
    handle: (request: z.infer<Q>) => Promise<z.input<R>>;
    invalidReply: z.input<R>;
    failureReply: z.input<R>;
  },
  logger: Logger,
): Responder {
  const subscription = bus.connection.subscribe(subject, { queue: subject });
  const inFlight = new Set<Promise<void>>();
  const respond = async (message: Msg) => {
    const parent = contextFromHeaders(message.headers);
    await withSpan(
      `handle ${subject}`,
      {
        kind: SpanKind.SERVER,
        attributes: { 'messaging.system': 'nats', 'messaging.destination.name': subject },
        ...(parent ? { parent } : {}),
      },
      async () => {
        let reply: z.input<R>;
        try {
          reply = await handlers.handle(decodeEnvelope(schemas.request, subject, message.data));
        } catch (error) {
          if (error instanceof InvalidEnvelopeError) {
            logger.warn({ subject, issues: error.issues }, 'invalid request envelope');
            reply = handlers.invalidReply;
          } else {
            logger.error({ subject, err: error }, 'request handler failed');
            reply = handlers.failureReply;
          }
        }
        message.respond(encodeJson(schemas.reply.parse(reply)));
      },
    );
  };
  void (async () => {
    for await (const message of subscription) {
      const task = respond(message).catch((error) => logger.error({ err: error, subject }, 'reply failed'));
      inFlight.add(task);
      void task.finally(() => inFlight.delete(task));
    }
  })();
  return {
    async stop() {
      await subscription.drain();
      await Promise.allSettled(inFlight);
    },
  };
}
