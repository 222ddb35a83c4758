import { randomUUID } from 'node:crypto';
import { EventEnvelope, frame } from '@quill/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeTestBus, openTestBus } from '../../../test/support/test-bus.ts';
import { testUrls, uniqueName } from '../../../test/support/urls.ts';
import { createAckedPublisher, PublishAckError } from '../src/acked-publisher.ts';
import { encodeJson } from '../src/codec.ts';
import { type Bus, connectBus, countStored, publishEnvelope, readStored } from '../src/index.ts';
import { tracedHeaders } from '../src/tracing.ts';

let bus: Bus;

beforeAll(async () => {
  bus = await openTestBus('ap', 'test');
});

afterAll(() => closeTestBus(bus));

const envelope = (runId: string, content: string) =>
  ({ v: 1, frame: frame('text', runId, { agent: 'writer', content }) }) as const;

describe('quiet publishes (one ack inbox per connection)', () => {
  it('stores every frame in order, acks each with its stream sequence, and drops a repeated msg id', async () => {
    const runId = randomUUID();
    const subject = bus.names.events(runId);
    const acks = await Promise.all(
      Array.from({ length: 300 }, (_, index) =>
        publishEnvelope(bus, subject, EventEnvelope, envelope(runId, `${index},`), {
          msgId: `${runId}:${index}`,
          quiet: true,
        }),
      ),
    );
    expect(acks.every((ack) => ack.stream === bus.names.streams.events && !ack.duplicate)).toBe(true);
    const sequences = acks.map((ack) => ack.seq);
    expect(sequences).toEqual([...sequences].sort((a, b) => a - b));
    expect(new Set(sequences).size).toBe(300);

    const again = await publishEnvelope(bus, subject, EventEnvelope, envelope(runId, 'again'), {
      msgId: `${runId}:7`,
      quiet: true,
    });
    expect(again.duplicate).toBe(true);
    expect(again.seq).toBe(acks[7]!.seq);

    const stored = await readStored(bus, {
      stream: bus.names.streams.events,
      subject,
      schema: EventEnvelope,
    });
    const text = stored.map((item) =>
      item.envelope?.frame.type === 'text' ? item.envelope.frame.content : '',
    );
    expect(text.join('')).toBe(Array.from({ length: 300 }, (_, index) => `${index},`).join(''));
  });

  it('rejects with PublishAckError when no stream takes the subject, and stores nothing', async () => {
    const subject = `${uniqueName('nostream')}.events`;
    await expect(
      publishEnvelope(bus, subject, EventEnvelope, envelope(randomUUID(), 'lost?'), { quiet: true }),
    ).rejects.toBeInstanceOf(PublishAckError);
  });

  it('fails a publish whose ack never comes once the timeout passes', async () => {
    // A subject someone answers with silence: a plain subscriber that never replies is not a
    // stream, and the server does not send "no responders" when a subscriber exists.
    const subject = `${uniqueName('silent')}.x`;
    const silent = bus.connection.subscribe(subject, { callback: () => undefined });
    await bus.connection.flush();
    const publisher = createAckedPublisher(bus.connection, { timeoutMs: 200 });
    const started = performance.now();
    await expect(publisher.publish(subject, encodeJson({}), tracedHeaders())).rejects.toThrow(/timeout/);
    expect(performance.now() - started).toBeGreaterThanOrEqual(200);
    expect(publisher.pending).toBe(0);
    silent.unsubscribe();
    expect(await countStored(bus, bus.names.streams.events, subject)).toBe(0);
  });

  it('a quiet publish the envelope check refuses rejects, and sends nothing', async () => {
    const runId = randomUUID();
    const subject = bus.names.events(runId);
    const bad = { v: 1, frame: { type: 'text', run_id: runId } } as never;
    const published = publishEnvelope(bus, subject, EventEnvelope, bad, { quiet: true });
    await expect(published).rejects.toThrow();
    expect(await countStored(bus, bus.names.streams.events, subject)).toBe(0);
  });

  it('sends a quiet publish whose ack was lost again until its deadline, then fails it and frees the batch', async () => {
    const short = await connectBus({
      url: testUrls.nats,
      namespace: bus.names.namespace,
      name: 'short-retry',
      publishRetry: { ackTimeoutMs: 150, deadlineMs: 600 },
    });
    try {
      const subject = `${uniqueName('silent')}.events`;
      let attempts = 0;
      const silent = short.connection.subscribe(subject, {
        callback: () => {
          attempts++;
        },
      });
      await short.connection.flush();
      const lost = publishEnvelope(short, subject, EventEnvelope, envelope(randomUUID(), 'lost'), {
        quiet: true,
      });
      await expect(lost).rejects.toThrow(/timeout/);
      // The first send and at least one more: the loop took over from the first lost ack.
      expect(attempts).toBeGreaterThanOrEqual(2);
      silent.unsubscribe();
      expect(short.state.batches.inFlight).toBe(0);
      // The next quiet publish goes out and is stored as ever.
      const runId = randomUUID();
      const ack = await publishEnvelope(
        short,
        short.names.events(runId),
        EventEnvelope,
        envelope(runId, 'ok'),
        {
          quiet: true,
        },
      );
      expect(ack.stream).toBe(short.names.streams.events);
    } finally {
      await short.close();
    }
  });
});
