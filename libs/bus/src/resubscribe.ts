import { type Consumer, type ConsumerMessages, DeliverPolicy, type JsMsg } from '@nats-io/jetstream';
import { backoffDelay, isTransientNatsError } from './backoff.ts';
import type { Bus } from './connection.ts';

/**
 * Calls `listener` after every reconnect of the bus's connection (one status watcher per
 * connection, however many readers). Returns the function that stops listening.
 */
export function onReconnect(bus: Bus, listener: () => void): () => void {
  const { state } = bus;
  if (!state.watchingStatus) {
    state.watchingStatus = true;
    void (async () => {
      for await (const status of bus.connection.status()) {
        if (status.type === 'reconnect') for (const each of [...state.reconnectListeners]) each();
      }
    })().catch(() => undefined);
  }
  state.reconnectListeners.add(listener);
  return () => state.reconnectListeners.delete(listener);
}

export interface ResubscribingReader extends AsyncIterable<JsMsg> {
  stop(): void;
}

/** How long one outage may take before a reader gives up re-subscribing and fails. */
export const RESUBSCRIBE_DEADLINE_MS = 120_000;

/** Removes a reader's consumer from the server (unless the connection is gone), not waiting for it. */
export function removeConsumer(bus: Bus, consumer: Consumer | undefined): void {
  if (consumer && !bus.connection.isClosed()) void consumer.delete().catch(() => undefined);
}

/**
 * An ordered consumer of one filter that survives a broker restart. nats.js notices a restart
 * only through missed idle heartbeats and then retries with the consume's `expires` (30 s) as its
 * backoff, which kept open streams silent for ~45 s (README "Fault tolerance"). Here every
 * reconnect of the connection stops the consume and starts a new ordered consumer from the
 * sequence after the last one delivered, retried with a short backoff while JetStream recovers:
 * each sequence is delivered once, in order, across any number of restarts.
 */
export async function consumeOrdered(
  bus: Bus,
  options: { stream: string; subject: string; startSeq: number; maxMessages: number },
): Promise<ResubscribingReader> {
  // The client leaves an ordered consumer on the server when its reader stops, for the five
  // minutes of inactivity nats.js gives it: ~36 KB of broker memory each, and every run read six
  // (measured: 8,000 idle consumers took nats-server from 12 to 302 MB RSS; decision 0041). Each
  // one is removed when its reader is done with it, or replaced after a reconnect; the server's
  // inactivity threshold still removes what a process that died left behind.
  let consumer: Consumer | undefined;
  const remove = (done: Consumer | undefined) => removeConsumer(bus, done);
  const open = async (fromSeq: number): Promise<ConsumerMessages> => {
    const previous = consumer;
    consumer = await bus.js.consumers.get(options.stream, {
      filter_subjects: options.subject,
      ...(fromSeq > 0
        ? { deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: fromSeq }
        : { deliver_policy: DeliverPolicy.All }),
    });
    remove(previous);
    return consumer.consume({ max_messages: options.maxMessages });
  };
  // The first subscription's failure is the caller's (a missing stream, a refused filter).
  let current = await open(options.startSeq);
  let nextSeq = options.startSeq;
  let stopped = false;
  const stopListening = onReconnect(bus, () => current.stop());
  const finished = () => stopped || bus.connection.isClosed();

  const reopen = async (): Promise<boolean> => {
    const startedAt = Date.now();
    for (let attempt = 1; !finished(); attempt++) {
      try {
        current = await open(nextSeq);
        return true;
      } catch (error) {
        if (!isTransientNatsError(error) || Date.now() - startedAt > RESUBSCRIBE_DEADLINE_MS) throw error;
        await new Promise((resolve) => setTimeout(resolve, backoffDelay(attempt, 100, 1000)));
      }
    }
    return false;
  };

  async function* messages(): AsyncGenerator<JsMsg> {
    try {
      for (;;) {
        try {
          for await (const message of current) {
            nextSeq = message.seq + 1;
            yield message;
          }
        } catch (error) {
          // The consume gave up (e.g. its consumer vanished with the server): a new one from the
          // next sequence loses nothing; a stream that is really gone fails the re-subscription.
          if (finished()) throw error;
        }
        if (finished() || !(await reopen())) return;
      }
    } finally {
      stopListening();
      remove(consumer);
      consumer = undefined;
    }
  }

  const iterable = messages();
  return {
    stop() {
      stopped = true;
      stopListening();
      current.stop();
      remove(consumer);
      consumer = undefined;
    },
    [Symbol.asyncIterator]: () => iterable,
  };
}
