import { randomUUID } from 'node:crypto';
import type { PubAck } from '@nats-io/jetstream';
import { type Msg, headers as natsHeaders } from '@nats-io/transport-node';
import { EventEnvelope, frame } from '@quill/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeTestBus, openTestBus } from '../../../test/support/test-bus.ts';
import { type Bus, publishEnvelope, subscribeRepublished } from '../src/index.ts';
import { rawHeaderBlock, republishStamp } from '../src/live-reads.ts';

let bus: Bus;

beforeAll(async () => {
  bus = await openTestBus('lr', 'test');
});

afterAll(() => closeTestBus(bus));

/** Collects `count` messages on `subject` as the client delivers them. */
function collect(subject: string, count: number): { ready: Promise<void>; messages: Promise<Msg[]> } {
  const received: Msg[] = [];
  let done: (messages: Msg[]) => void = () => undefined;
  const messages = new Promise<Msg[]>((resolve) => {
    done = resolve;
  });
  const subscription = bus.connection.subscribe(subject, {
    callback: (error, message) => {
      if (error) return;
      received.push(message);
      if (received.length === count) {
        subscription.unsubscribe();
        done(received);
      }
    },
  });
  return { ready: bus.connection.flush(), messages };
}

describe('republished frames', () => {
  it('are read with the sequence, previous sequence and subject the client decoder reads', async () => {
    const runId = randomUUID();
    const raw = collect(bus.names.live(runId), 30);
    const seen: Array<{ seq: number; previousSeq: number; subject: string }> = [];
    const live = subscribeRepublished(bus, bus.names.live(runId), {
      message: ({ seq, previousSeq, subject }) => seen.push({ seq, previousSeq, subject }),
      reconnected: () => undefined,
    });
    await Promise.all([raw.ready, live.ready]);
    const acks: PubAck[] = [];
    for (let index = 0; index < 30; index++) {
      const content = index % 7 === 0 ? `Nats-Sequence: 9\r\n${'é'.repeat(index)}` : `${index},`;
      acks.push(
        await publishEnvelope(
          bus,
          bus.names.events(runId),
          EventEnvelope,
          { v: 1, frame: frame('text', runId, { agent: 'writer', content }) },
          { msgId: `${runId}:${index}`, quiet: true },
        ),
      );
    }
    const messages = await raw.messages;
    live.close();
    for (const message of messages) {
      // Read from the bytes, not through the decoder: a client upgrade that moves them shows here.
      expect(rawHeaderBlock(message)).toMatch(/^NATS\/1\.0\r\n/);
      expect(republishStamp(message)).toEqual({
        seq: message.headers?.get('Nats-Sequence'),
        lastSeq: message.headers?.get('Nats-Last-Sequence'),
        subject: message.headers?.get('Nats-Subject'),
      });
    }
    expect(seen).toEqual(
      acks.map((ack, index) => ({
        seq: ack.seq,
        previousSeq: index === 0 ? 0 : acks[index - 1]!.seq,
        subject: bus.names.events(runId),
      })),
    );
  });

  it('falls back to the client decoder for messages whose headers it does not expect', async () => {
    const subject = `${bus.names.live(randomUUID())}`;
    const raw = collect(subject, 3);
    await raw.ready;
    const withSequence = natsHeaders();
    withSequence.set('nats-sequence', '12');
    withSequence.set('Nats-Last-Sequence', '11');
    bus.connection.publish(subject, new TextEncoder().encode('{}'), { headers: withSequence });
    bus.connection.publish(subject, new TextEncoder().encode('no headers'));
    const other = natsHeaders();
    other.set('Something', 'else');
    bus.connection.publish(subject, new Uint8Array(0), { headers: other });
    const messages = await raw.messages;
    // Exactly what the client's decoder reads, whatever the header block holds.
    expect(messages.map(republishStamp)).toEqual(
      messages.map((message) => ({
        seq: message.headers?.get('Nats-Sequence'),
        lastSeq: message.headers?.get('Nats-Last-Sequence'),
        subject: message.headers?.get('Nats-Subject') || undefined,
      })),
    );
    expect(republishStamp(messages[1]!)).toEqual({ seq: undefined, lastSeq: undefined, subject: undefined });
  });
});
