import {
  AckPolicy,
  type Consumer,
  type ConsumerInfo,
  type ConsumerMessages,
  DeliverPolicy,
  type JsMsg,
} from '@nats-io/jetstream';
import { backoffDelay, isTransientNatsError } from './backoff.ts';
import type { Bus } from './connection.ts';
import { nextStored, type RawStoredMessage } from './raw-reads.ts';
import { onReconnect, RESUBSCRIBE_DEADLINE_MS, removeConsumer } from './resubscribe.ts';

/** How long a range read may go without a delivery before it asks what is left. */
const IDLE_CHECK_MS = 1_000;
/** Messages asked for per pull. */
const PULL_BATCH = 512;
/** How long the server keeps a consumer whose reader died without removing it. */
const ORPHAN_CONSUMER_NS = 5 * 60 * 1_000_000_000;

export interface StoredRange {
  stream: string;
  subject: string;
  afterSeq: number;
  /**
   * Start from the first message stored at or after this time instead of after `afterSeq`:
   * the server finds it from its blocks' time stamps, so a read of a recent subject does not look
   * through every older block of the stream for it (docs/decisions/0075). `onStart` is told the
   * sequence the read began at once the server named it.
   */
  since?: Date;
  onStart?: (firstSeq: number) => void;
}

/**
 * A consumer for one read of `subject`, from a sequence or from the first message stored at or
 * after a time: no ack, in memory, one replica, as an ordered consumer is. Its reader removes it;
 * the server does after ORPHAN_CONSUMER_NS when the reader died first. Its info names the
 * sequence before where it starts (`delivered.stream_seq`) and how many messages wait.
 */
export function addReadConsumer(
  bus: Bus,
  stream: string,
  subject: string,
  start: { seq: number } | { time: Date },
): Promise<ConsumerInfo> {
  return bus.jsm.consumers.add(stream, {
    filter_subject: subject,
    ...('time' in start
      ? { deliver_policy: DeliverPolicy.StartTime, opt_start_time: start.time.toISOString() }
      : { deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: start.seq }),
    ack_policy: AckPolicy.None,
    mem_storage: true,
    num_replicas: 1,
    inactive_threshold: ORPHAN_CONSUMER_NS,
  });
}

/**
 * Hands every message stored on `subject` after `afterSeq` when the read starts to `onMessage`,
 * in order, and resolves once the last one was handed over (one stored meanwhile may come too).
 * The end-of-run reads (billing's settlement record, the router's archive) read every frame of a
 * run, one per token when tokens come further apart than the coalescing window; here a consumer
 * hands each message straight to a callback, with no async iterator, promise or timer per message
 * (docs/decisions/0048-end-of-run-reads.md). The read makes its consumer itself (no ack, in
 * memory, one replica, as an ordered consumer is): the request that makes it also says how many
 * messages wait, so no stream-info request and no look-up of the newest message go before it,
 * and an empty subject ends the read at once.
 *
 * As `consumeOrdered` does for live readers: a reconnect stops the consume and a new consumer
 * starts from the next sequence (messages of the one it replaced are ignored), retried while
 * JetStream recovers; the consumer is removed when the read ends. A consumer says nothing of
 * messages that expire (the stream's max age) or are removed while they are read: after a second
 * without a delivery the read asks by direct get whether anything is left, and ends when nothing
 * is. The first consumer's failure (a missing stream, a refused filter) rejects.
 */
export function readStoredRange(
  bus: Bus,
  range: StoredRange,
  onMessage: (message: RawStoredMessage) => void,
): Promise<void> {
  const { stream, subject } = range;
  return new Promise<void>((resolve, reject) => {
    let nextSeq = range.afterSeq + 1;
    /** Until the first consumer is made, a read given `since` starts from that time. */
    let startKnown = range.since === undefined;
    /** Messages stored when the read began and not handed over yet (known once the first consumer is made). */
    let left: number | undefined;
    let consumer: Consumer | undefined;
    let messages: ConsumerMessages | undefined;
    /** Bumped by every (re)subscription: a consume that ended belongs to the current one only if equal. */
    let generation = 0;
    let delivered = 0;
    let deliveredAtLastCheck = 0;
    let outageSince: number | undefined;
    let finished = false;

    const remove = (done: Consumer | undefined) => removeConsumer(bus, done);
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

    /**
     * The messages of one consumer, `mine`. Its delivery sequence goes up by one per message: a
     * jump means some were lost on the way (a connection cut), and a new consumer reads on from
     * the next sequence, however the client's reconnect and its re-pull are timed.
     */
    const deliveries = (mine: number) => {
      let expected = 1;
      return (message: JsMsg) => {
        if (finished || mine !== generation) return;
        if (message.info.deliverySequence !== expected) {
          resubscribe();
          return;
        }
        expected++;
        deliver(message);
      };
    };

    const deliver = (message: JsMsg) => {
      try {
        const seq = message.seq;
        nextSeq = seq + 1;
        delivered++;
        if (left !== undefined) left--;
        const pending = message.info.pending;
        onMessage({ seq, subject, data: message.data, pending });
        if (pending === 0 || left === 0) finish();
      } catch (error) {
        finish(error);
      }
    };

    const subscribe = async (mine: number, first: boolean): Promise<void> => {
      for (let attempt = 1; !finished && mine === generation; attempt++) {
        try {
          const byTime = !startKnown && range.since !== undefined;
          const info = await addReadConsumer(
            bus,
            stream,
            subject,
            byTime ? { time: range.since! } : { seq: nextSeq },
          );
          const opened = bus.js.consumers.getConsumerFromInfo(info);
          if (finished || mine !== generation) {
            remove(opened);
            return;
          }
          remove(consumer);
          consumer = opened;
          if (byTime) {
            // The server names where the time put the read: the sequence before its first message.
            nextSeq = info.delivered.stream_seq + 1;
            startKnown = true;
            range.onStart?.(nextSeq);
          }
          left ??= info.num_pending;
          // Nothing (left) to read: an empty subject, or what was left expired meanwhile.
          if (info.num_pending === 0) {
            finish();
            return;
          }
          const consume = await opened.consume({ max_messages: PULL_BATCH, callback: deliveries(mine) });
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
        (stored) => {
          if (!stored) finish();
        },
        // A failed check (a broker restarting) is tried again at the next tick.
        () => undefined,
      );
    }, IDLE_CHECK_MS);
    const stopListening = onReconnect(bus, resubscribe);
    void subscribe(generation, true);
  });
}
