import type { MsgRequest, NextMsgRequest } from '@nats-io/jetstream';
import type { Bus } from './connection.ts';
import { consumeOrdered } from './resubscribe.ts';

/** A stored message as it is, for readers that decode only what they keep. */
export interface RawStoredMessage {
  readonly seq: number;
  readonly subject: string;
  readonly data: Uint8Array;
  /** Messages of the filter still waiting behind this one at delivery time (0 = caught up). */
  readonly pending: number;
}

export interface RawReader extends AsyncIterable<RawStoredMessage> {
  close(): void;
}

/**
 * Reads every message of a (wildcard) filter in order from a sequence, live, without decoding:
 * one ordered consumer that a process can fan out itself (the gateway's run event tap). It
 * re-subscribes after a broker restart from the next sequence (`consumeOrdered`).
 */
export async function readOrderedRaw(
  bus: Bus,
  options: { stream: string; subject: string; startSeq: number; batch?: number },
): Promise<RawReader> {
  const messages = await consumeOrdered(bus, {
    stream: options.stream,
    subject: options.subject,
    startSeq: Math.max(1, options.startSeq),
    maxMessages: options.batch ?? 1024,
  });
  return {
    close: () => messages.stop(),
    async *[Symbol.asyncIterator]() {
      for await (const message of messages) {
        yield {
          seq: message.seq,
          subject: message.subject,
          data: message.data,
          pending: message.info.pending,
        };
      }
    },
  };
}

/** The sequence of the newest message in a stream (0 when empty). */
export async function lastSequence(bus: Bus, stream: string): Promise<number> {
  return (await bus.jsm.streams.info(stream)).state.last_seq;
}

/**
 * The first stored message on `subject` after `afterSeq`, or undefined when there is none yet:
 * one request by sequence (`next_by_subj`), no consumer.
 */
export async function nextStored(
  bus: Bus,
  options: { stream: string; subject: string; afterSeq: number },
): Promise<RawStoredMessage | undefined> {
  // STREAM.MSG.GET takes `next_by_subj` since nats-server 2.9 (checked on 2.9.10); the client's
  // type for this API only lists the direct-get variant of it.
  const query: NextMsgRequest = { seq: options.afterSeq + 1, next_by_subj: options.subject };
  const stored = await bus.jsm.streams.getMessage(options.stream, query as unknown as MsgRequest);
  return stored ? { seq: stored.seq, subject: stored.subject, data: stored.data, pending: 0 } : undefined;
}

/** The newest stored message on `subject` (`last_by_subj`), or undefined when it has none. */
export async function lastStored(
  bus: Bus,
  options: { stream: string; subject: string },
): Promise<RawStoredMessage | undefined> {
  const stored = await bus.jsm.streams.getMessage(options.stream, { last_by_subj: options.subject });
  return stored ? { seq: stored.seq, subject: stored.subject, data: stored.data, pending: 0 } : undefined;
}
