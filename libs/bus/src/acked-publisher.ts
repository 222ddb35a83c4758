import type { PubAck } from '@nats-io/jetstream';
import { createInbox, type Msg, type MsgHdrs, type NatsConnection } from '@nats-io/transport-node';

/** A JetStream publish that was not acknowledged (stream missing, storage refused, timeout). */
export class PublishAckError extends Error {
  readonly subject: string;
  constructor(subject: string, message: string) {
    super(`publish to ${subject} not acknowledged: ${message}`);
    this.name = new.target.name;
    this.subject = subject;
  }
}

/** Told once how a publish ended: the ack, or why there is none. */
export type AckCallback = (error: Error | undefined, ack: PubAck | undefined) => void;

export interface AckedPublisher {
  /** Without headers the message goes as a plain `PUB` (no header block at all). */
  publish(subject: string, data: Uint8Array, headers?: MsgHdrs): Promise<PubAck>;
  /**
   * `publish` without a promise of its own: for the batched frames, which already carry one
   * each (a streamed token's publish is a chain of promises otherwise, docs/decisions/0079).
   * A message refused before it left (a closed connection) is told at once.
   */
  send(subject: string, data: Uint8Array, headers: MsgHdrs | undefined, done: AckCallback): void;
  readonly pending: number;
}

interface Waiting {
  subject: string;
  data: Uint8Array;
  headers: MsgHdrs | undefined;
  sentAt: number;
  done: AckCallback;
}

const decoder = new TextDecoder();

/**
 * JetStream publishes with acks at the cost of a core publish. nats.js sends every `js.publish`
 * through its request machinery: a muxed request object, a timer, a promise race and an Error
 * built for every message, even a successful one; at thousands of frames a second that was half
 * of a worker's publish cost (measured: 48 µs vs 6.5 µs per message for a core publish, see
 * test/load/jetstream-publish.ts). Here each message is a core publish whose reply subject is this
 * connection's ack inbox plus a counter: one subscription settles them all and one sweep fails
 * those whose ack is overdue. The ack itself is JetStream's, so "stored" means the same.
 */
export function createAckedPublisher(
  connection: NatsConnection,
  options: { timeoutMs: number },
): AckedPublisher {
  const prefix = createInbox();
  const waiting = new Map<number, Waiting>();
  let counter = 0;

  connection.subscribe(`${prefix}.*`, {
    callback: (error, message) => {
      if (error) return;
      const id = Number(message.subject.slice(prefix.length + 1));
      const entry = waiting.get(id);
      if (!entry) return;
      waiting.delete(id);
      settle(entry, message);
    },
  });

  // Ids grow with time, so the Map (insertion order) holds the oldest first.
  const sweep = setInterval(
    () => {
      const overdue = performance.now() - options.timeoutMs;
      for (const [id, entry] of waiting) {
        if (entry.sentAt > overdue) break;
        waiting.delete(id);
        entry.done(new PublishAckError(entry.subject, 'timeout'), undefined);
      }
    },
    Math.max(100, Math.floor(options.timeoutMs / 4)),
  );
  sweep.unref();
  // A broker restart loses what was on the old socket and not yet stored: after a reconnect
  // everything still waiting is sent again, in its order, under the same ack subject. Each
  // carries its Nats-Msg-Id (publish.ts), so what was stored after all is not stored twice.
  void (async () => {
    for await (const status of connection.status()) {
      if (status.type !== 'reconnect') continue;
      for (const [id, entry] of waiting) {
        try {
          connection.publish(entry.subject, entry.data, { reply: `${prefix}.${id}`, headers: entry.headers });
        } catch {
          // Closed meanwhile: the close handler below fails every waiting publish.
        }
      }
    }
  })().catch(() => undefined);
  void connection.closed().then(() => {
    clearInterval(sweep);
    for (const entry of waiting.values())
      entry.done(new PublishAckError(entry.subject, 'connection closed'), undefined);
    waiting.clear();
  });

  const send = (subject: string, data: Uint8Array, headers: MsgHdrs | undefined, done: AckCallback) => {
    const id = counter++;
    waiting.set(id, { subject, data, headers, sentAt: performance.now(), done });
    try {
      connection.publish(subject, data, { reply: `${prefix}.${id}`, headers });
    } catch (error) {
      waiting.delete(id);
      done(error as Error, undefined);
    }
  };
  return {
    publish(subject, data, headers) {
      return new Promise<PubAck>((resolve, reject) => {
        send(subject, data, headers, (error, ack) => (error ? reject(error) : resolve(ack!)));
      });
    },
    send,
    get pending() {
      return waiting.size;
    },
  };
}

function settle(entry: Waiting, message: Msg): void {
  // No stream listens on the subject: the server answers with a 503 status and no body.
  if (message.data.length === 0) {
    const status = message.headers?.code ?? 0;
    entry.done(
      new PublishAckError(entry.subject, status === 503 ? 'no stream for this subject' : `status ${status}`),
      undefined,
    );
    return;
  }
  let ack: {
    stream?: string;
    seq?: number;
    duplicate?: boolean;
    domain?: string;
    error?: { description?: string };
  };
  try {
    ack = JSON.parse(decoder.decode(message.data));
  } catch {
    entry.done(new PublishAckError(entry.subject, 'unreadable ack'), undefined);
    return;
  }
  if (ack.error || typeof ack.stream !== 'string' || typeof ack.seq !== 'number') {
    entry.done(new PublishAckError(entry.subject, ack.error?.description ?? 'invalid ack'), undefined);
    return;
  }
  entry.done(undefined, {
    stream: ack.stream,
    seq: ack.seq,
    duplicate: ack.duplicate === true,
    ...(ack.domain ? { domain: ack.domain } : {}),
  });
}
