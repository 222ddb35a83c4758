import type { Msg } from '@nats-io/transport-node';
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
  return liveSubscription(bus, subject, handlers.reconnected, (message) => {
    const stamp = republishStamp(message);
    const seq = Number(stamp.seq);
    if (!Number.isSafeInteger(seq) || seq <= 0) return;
    handlers.message({
      seq,
      subject: stamp.subject ?? subject,
      data: message.data,
      pending: 0,
      previousSeq: Number(stamp.lastSeq) || 0,
    });
  });
}

/**
 * A core subscription on a subject a stream captures: every publish to it reaches core
 * subscribers as well as the stream, without a sequence (and a duplicate the stream dropped is
 * delivered too). For a reader that knows what it has folded by content and reads the stream by
 * sequence for what core delivery may have lost: after `reconnected`, and now and then. No
 * consumer on the server.
 */
export function subscribePublished(
  bus: Bus,
  subject: string,
  handlers: { message(data: Uint8Array): void; reconnected(): void },
): LiveSubscription {
  return liveSubscription(bus, subject, handlers.reconnected, (message) => handlers.message(message.data));
}

/** A core subscription with a reconnect listener, ready once the server has the SUB. */
function liveSubscription(
  bus: Bus,
  subject: string,
  reconnected: () => void,
  onMessage: (message: Msg) => void,
): LiveSubscription {
  const subscription = bus.connection.subscribe(subject, {
    callback: (error, message) => {
      if (!error) onMessage(message);
    },
  });
  const stopListening = onReconnect(bus, reconnected);
  return {
    // A flush round trip: the server has processed the SUB before it answers.
    ready: bus.connection.flush(),
    close() {
      stopListening();
      subscription.unsubscribe();
    },
  };
}

/** What a republished message says of where it was stored (header values as sent). */
interface RepublishStamp {
  readonly seq: string | undefined;
  readonly lastSeq: string | undefined;
  readonly subject: string | undefined;
}

const HEADER_LINE = 'NATS/1.0';

/**
 * The three headers a reader of a republish needs, read from the header block's bytes. A
 * republished frame carries the producer's headers and five of the stream's; the client's
 * `message.headers` decodes them all into a map (a tenth of a gateway's CPU per frame, see
 * docs/decisions/0034-per-frame-work-off-the-token-path.md). The block is the `hdr` bytes the
 * server sent right before the payload in the same buffer (`message.data` is a view past it), so
 * its length is the message's size less subject, reply and payload. Anything unexpected (no
 * `NATS/1.0` line there, a header missing) goes through the client's own decoder.
 */
export function republishStamp(message: Msg): RepublishStamp {
  const block = rawHeaderBlock(message);
  if (block !== undefined) {
    const seq = headerValue(block, 'Nats-Sequence');
    if (seq !== undefined) {
      return {
        seq,
        lastSeq: headerValue(block, 'Nats-Last-Sequence'),
        subject: headerValue(block, 'Nats-Subject'),
      };
    }
  }
  const headers = message.headers;
  return {
    seq: headers?.get('Nats-Sequence'),
    lastSeq: headers?.get('Nats-Last-Sequence'),
    subject: headers?.get('Nats-Subject') || undefined,
  };
}

/**
 * The message's header block as text, when the client holds it right before the payload.
 * `size()` (subject, reply, headers and payload in bytes) is on the client's message class,
 * not on its `Msg` type: without it, the client's decoder is used.
 */
export function rawHeaderBlock(message: Msg): string | undefined {
  const size = (message as Msg & { size?: () => number }).size;
  if (typeof size !== 'function') return undefined;
  const data = message.data;
  const length = size.call(message) - message.subject.length - (message.reply?.length ?? 0) - data.length;
  if (length < HEADER_LINE.length || length > data.byteOffset) return undefined;
  const block = Buffer.from(data.buffer, data.byteOffset - length, length).toString('latin1');
  return block.startsWith(HEADER_LINE) ? block : undefined;
}

function headerValue(block: string, name: string): string | undefined {
  const at = block.indexOf(`\r\n${name}:`);
  if (at < 0) return undefined;
  const from = at + name.length + 3;
  const end = block.indexOf('\r\n', from);
  return block.slice(from, end < 0 ? undefined : end).trim();
}
