import { type Consumer, type ConsumerMessages, DeliverPolicy, type JsMsg } from '@nats-io/jetstream';
import { backoffDelay, isTransientNatsError } from './backoff.ts';
import type { Bus } from './connection.ts';
import { nextStored, type RawStoredMessage } from './raw-reads.ts';
import { onReconnect } from './resubscribe.ts';

/** How long a range read may go without a delivery before it asks what is left. */
const IDLE_CHECK_MS = 1_000;
/** How long one outage may take before the read gives up re-subscribing and fails. */
const RESUBSCRIBE_DEADLINE_MS = 120_000;
/** Messages asked for per pull. */
const PULL_BATCH = 512;

/**
 * Hands every message stored on `subject` after `afterSeq`, up to `lastSeq`, to `onMessage`, in
 * order, and resolves once the last one was handed over. The end-of-run reads (billing's
 * settlement record, the router's archive) read every frame of a run, one per token when tokens
 * come further apart than the coalescing window; here the ordered consumer hands each message
 * straight to a callback, with no async iterator, promise or timer per message
 * (docs/decisions/0048-end-of-run-reads.md).
 *
 * As `consumeOrdered` does for live readers: a reconnect stops the consume and a new ordered
 * consumer starts from the next sequence (a sequence already handed over is skipped), retried
 * while JetStream recovers; the consumer is removed when the read ends. A consumer says nothing
 * of messages that expire (the stream's max age) or are removed while they are read: after a
 * second without a delivery the read asks by direct get whether anything is left up to `lastSeq`,
 * and ends when nothing is. The first subscription's failure (a missing stream, a refused
 * filter) rejects.
 */
export function readStoredRange(
  bus: Bus,
  range: { stream: string; subject: string; afterSeq: number; lastSeq: number },
  onMessage: (message: RawStoredMessage) => void,
): Promise<void> {
  const { stream, subject, lastSeq } = range;
  return new Promise<void>((resolve, reject) => {
    let nextSeq = range.afterSeq + 1;
    let consumer: Consumer | undefined;
    let messages: ConsumerMessages | undefined;
    /** Bumped by every (re)subscription: a consume that ended belongs to the current one only if equal. */
    let generation = 0;
    let delivered = 0;
    let deliveredAtLastCheck = 0;
    let outageSince: number | undefined;
    let finished = false;

    const remove = (done: Consumer | undefined) => {
      if (done && !bus.connection.isClosed()) void done.delete().catch(() => undefined);
    };
    const finish = (error?: unknown) => {
      if (finished) return;
      finished = true;
      clearInterval(watch);
      stopListening();
      messages?.stop();
      remove(consumer);
      consumer = undefined;
      if (error === undefined) resolve();
      else reject(error);
    };

    const deliver = (message: JsMsg) => {
      if (finished) return;
      try {
        const seq = message.seq;
        // Sent again by a consumer that replaced one whose last deliveries did arrive.
        if (seq < nextSeq) return;
        nextSeq = seq + 1;
        delivered++;
        const pending = message.info.pending;
        onMessage({ seq, subject, data: message.data, pending });
        if (pending === 0 || seq >= lastSeq) finish();
      } catch (error) {
        finish(error);
      }
    };

    const subscribe = async (mine: number, first: boolean): Promise<void> => {
      for (let attempt = 1; !finished && mine === generation; attempt++) {
        try {
          const opened = await bus.js.consumers.get(stream, {
            filter_subjects: subject,
            deliver_policy: DeliverPolicy.StartSequence,
            opt_start_seq: nextSeq,
          });
          if (finished || mine !== generation) {
            remove(opened);
            return;
          }
          remove(consumer);
          consumer = opened;
          const consume = await opened.consume({ max_messages: PULL_BATCH, callback: deliver });
          if (finished || mine !== generation) {
            consume.stop();
            return;
          }
          messages = consume;
          outageSince = undefined;
          // A consume that ends by itself (its consumer vanished with the server): a new one
          // from the next sequence loses nothing, and a stream really gone fails it.
          void consume.closed().then(() => {
            if (!finished && mine === generation) resubscribe();
          });
          return;
        } catch (error) {
          outageSince ??= Date.now();
          const giveUp =
            first ||
            bus.connection.isClosed() ||
            !isTransientNatsError(error) ||
            Date.now() - outageSince > RESUBSCRIBE_DEADLINE_MS;
          if (giveUp) {
            finish(error);
            return;
          }
          await new Promise((wake) => setTimeout(wake, backoffDelay(attempt, 100, 1000)));
        }
      }
    };

    const resubscribe = () => {
      if (finished) return;
      const mine = ++generation;
      const previous = messages;
      messages = undefined;
      previous?.stop();
      void subscribe(mine, false);
    };

    // One timer for the whole read, not one per message.
    const watch = setInterval(() => {
      if (delivered !== deliveredAtLastCheck) {
        deliveredAtLastCheck = delivered;
        return;
      }
      void nextStored(bus, { stream, subject, afterSeq: nextSeq - 1 }).then(
        (left) => {
          if (!left || left.seq > lastSeq) finish();
        },
        // A failed check (a broker restarting) is tried again at the next tick.
        () => undefined,
      );
    }, IDLE_CHECK_MS);
    const stopListening = onReconnect(bus, resubscribe);
    void subscribe(generation, true);
  });
}
