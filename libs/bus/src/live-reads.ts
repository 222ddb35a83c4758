import type { Bus } from './connection.ts';
import type { RawStoredMessage } from './raw-reads.ts';
import { onReconnect } from './resubscribe.ts';

/** A stored message as its stream republished it: with its sequence and the subject's previous one. */
export interface RepublishedMessage extends RawStoredMessage {
  /**
   * The sequence of the message stored before it on the same subject (0 when none): a reader
   * whose last sequence is lower missed one (core delivery is at most once) and reads the gap.
   */
  readonly previousSeq: number;
}

export interface LiveSubscription {
  /** Settles once the server has the subscription: what is stored afterwards is delivered. */
  readonly ready: Promise<void>;
  close(): void;
}

/** Whether `stream` republishes to `dest` (nats-server 2.9 sets it only when a stream is created). */
export async function republishesTo(bus: Bus, stream: string, dest: string): Promise<boolean> {
  return (await bus.jsm.streams.info(stream)).config.republish?.dest === dest;
}

/**
 * A core subscription on what a stream republishes for one subject (`RePublish`: each stored
 * message again, with `Nats-Sequence` and `Nats-Last-Sequence`). No consumer: the server sends
 * it only to connections that subscribed, so a reader pays for the subjects it reads and nothing
 * else. Core delivery is at most once (a reconnect loses what was in flight): `previousSeq`
 * shows a gap, and `reconnected` is called after every reconnect, when the reader reads what was
 * stored meanwhile by sequence.
 */
export function subscribeRepublished(
  bus: Bus,
  subject: string,
  handlers: { message(message: RepublishedMessage): void; reconnected(): void },
): LiveSubscription {
  const subscription = bus.connection.subscribe(subject, {
    callback: (error, message) => {
      if (error) return;
      const seq = Number(message.headers?.get('Nats-Sequence'));
      if (!Number.isSafeInteger(seq) || seq <= 0) return;
      handlers.message({
        seq,
        subject: message.headers?.get('Nats-Subject') ?? subject,
        data: message.data,
        pending: 0,
        previousSeq: Number(message.headers?.get('Nats-Last-Sequence')) || 0,
      });
    },
  });
  const stopListening = onReconnect(bus, handlers.reconnected);
  return {
    // A flush round trip: the server has processed the SUB before it answers.
    ready: bus.connection.flush(),
    close() {
      stopListening();
      subscription.unsubscribe();
    },
  };
}
