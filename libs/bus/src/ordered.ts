import type { JsMsg } from '@nats-io/jetstream';
import type { z } from 'zod';
import { decodeEnvelope, InvalidEnvelopeError } from './codec.ts';
import type { Bus } from './connection.ts';
import { lastStored, nextStored, type RawStoredMessage } from './raw-reads.ts';
import { consumeOrdered } from './resubscribe.ts';
import { readStoredRange, type StoredRange } from './stored-range.ts';

export interface OrderedItem<T> {
  /** The JetStream stream sequence: the SSE `id:` and the resume point. */
  readonly seq: number;
  readonly subject: string;
  /** Messages of the filter still waiting behind this one at delivery time (0 = caught up). */
  readonly pending: number;
  readonly envelope: T | undefined;
  /** Set when the stored message does not parse; the reader decides how to end the run. */
  readonly invalid?: InvalidEnvelopeError;
}

export interface OrderedReader<T> extends AsyncIterable<OrderedItem<T>> {
  close(): Promise<void>;
}

/**
 * Reads one subject of a stream in order from a sequence, live (an ordered consumer: no acks,
 * recreated by the client on gaps, and from the next sequence after a reconnect, see
 * `consumeOrdered`). nats-server 2.9 takes a single filter subject string.
 */
export async function readOrdered<S extends z.ZodType>(
  bus: Bus,
  options: { stream: string; subject: string; schema: S; startSeq?: number },
): Promise<OrderedReader<z.infer<S>>> {
  const messages = await consumeOrdered(bus, {
    stream: options.stream,
    subject: options.subject,
    startSeq: options.startSeq && options.startSeq > 0 ? options.startSeq : 0,
    maxMessages: 256,
  });
  const source = messages[Symbol.asyncIterator]();
  // A literal filter is every message's subject: no need to decode it from each message's bytes.
  const literal = /[*>]/.test(options.subject) ? undefined : options.subject;
  const toItem = (message: JsMsg): OrderedItem<z.infer<S>> => {
    const subject = literal ?? message.subject;
    const base = { seq: message.seq, subject, pending: message.info.pending };
    try {
      return { ...base, envelope: decodeEnvelope(options.schema, subject, message.data) };
    } catch (error) {
      if (!(error instanceof InvalidEnvelopeError)) throw error;
      return { ...base, envelope: undefined, invalid: error };
    }
  };
  let closed = false;
  // nats.js finishes an iterator's close() only from inside its own iteration loop, so a reader
  // that is not being iterated would wait forever: stop it, then let the loop run out.
  const close = async () => {
    if (closed) return;
    closed = true;
    messages.stop();
    await source.return?.();
  };
  const iterator: AsyncIterator<OrderedItem<z.infer<S>>> = {
    async next() {
      const result = await source.next();
      return result.done ? { done: true, value: undefined } : { done: false, value: toItem(result.value) };
    },
    async return() {
      await close();
      return { done: true, value: undefined };
    },
  };
  return {
    close,
    [Symbol.asyncIterator]: () => iterator,
  };
}

/** How many messages a stream holds on one subject right now. */
export async function countStored(bus: Bus, stream: string, subject: string): Promise<number> {
  const info = await bus.jsm.streams.info(stream, { subjects_filter: subject });
  return info.state.subjects?.[subject] ?? 0;
}

/**
 * Everything stored on a subject so far (replay), in order, then stops; after `afterSeq` when
 * given. A subject that usually holds a handful of messages (a run's step records, its usage
 * reports) is read with `few`: up to that many messages one direct get each (`next_by_subj`), the
 * get that finds none ending the read. A subject holding more, or read without `few`, goes on
 * with a consumer up to what is stored when it is made (the request that makes it says how many
 * messages wait). A consumer is a request that makes it, its pull and a subscription, and a
 * request that removes it; a direct get is one request
 * (docs/decisions/0041-broker-work-per-launch.md). The consumer hands each message to the decoder
 * as it comes (`readStoredRange`): a run's frames are read this way once per token when it ends
 * (docs/decisions/0048-end-of-run-reads.md).
 *
 * `settled`, for a subject nothing is added to any more (a run's records read once it ended): the
 * first get goes together with one for the subject's newest message, and the read stops at that
 * one instead of asking once more to find nothing: a round trip fewer for the same requests (one
 * round for a single message, two for two).
 */
export async function readStored<S extends z.ZodType>(
  bus: Bus,
  options: {
    stream: string;
    subject: string;
    schema: S;
    few?: number;
    afterSeq?: number;
    settled?: boolean;
    /** For a read without `few`: start from this time (`readStoredRange`'s `since`, `onStart`). */
    since?: Date;
    onStart?: (firstSeq: number) => void;
  },
): Promise<Array<OrderedItem<z.infer<S>>>> {
  const items: Array<OrderedItem<z.infer<S>>> = [];
  let afterSeq = options.afterSeq ?? 0;
  const { stream, subject } = options;
  const storedAfter = () => nextStored(bus, { stream, subject, afterSeq });
  const few = options.few ?? 0;
  // The newest message when the read began, for a settled subject: where the direct gets stop.
  let newest: number | undefined;
  for (let read = 0; read < few; read++) {
    let stored: RawStoredMessage | undefined;
    if (read === 0 && options.settled) {
      const [first, last] = await Promise.all([storedAfter(), lastStored(bus, { stream, subject })]);
      stored = first;
      newest = last?.seq ?? 0;
    } else stored = await storedAfter();
    if (!stored) return items;
    items.push(decodedItem(options.schema, subject, stored));
    afterSeq = stored.seq;
    if (newest !== undefined && afterSeq >= newest) return items;
  }
  // What is stored now bounds the read: one still being written to is read up to here.
  const range: StoredRange = { stream, subject, afterSeq };
  if (few === 0 && options.since) {
    range.since = options.since;
    if (options.onStart) range.onStart = options.onStart;
  }
  await readStoredRange(bus, range, (stored) => items.push(decodedItem(options.schema, subject, stored)));
  return items;
}

function decodedItem<S extends z.ZodType>(
  schema: S,
  subject: string,
  stored: RawStoredMessage,
): OrderedItem<z.infer<S>> {
  const base = { seq: stored.seq, subject, pending: stored.pending };
  try {
    return { ...base, envelope: decodeEnvelope(schema, subject, stored.data) };
  } catch (error) {
    if (!(error instanceof InvalidEnvelopeError)) throw error;
    return { ...base, envelope: undefined, invalid: error };
  }
}
