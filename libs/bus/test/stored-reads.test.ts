import { randomUUID } from 'node:crypto';
import { EventEnvelope, frame, type SseFrame } from '@quill/contracts';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { closeTestBus, countStoredGets, openTestBus } from '../../../test/support/test-bus.ts';
import { type Bus, InvalidEnvelopeError, publishFrame, readOrdered, readStored } from '../src/index.ts';

// A namespace of its own: one test counts the consumers on its EVENTS stream.
let bus: Bus;

beforeAll(async () => {
  bus = await openTestBus('r', 'test');
});

afterAll(() => closeTestBus(bus));

const textFrame = (runId: string, content: string): SseFrame =>
  frame('text', runId, { agent: 'writer', content });

describe('readStored and readOrdered', () => {
  it('readStored returns exactly what was published to the subject, in order', async () => {
    const { names } = bus;
    const runId = randomUUID();
    const otherRun = randomUUID();
    const frames = Array.from({ length: 7 }, (_, index) => textFrame(runId, `part ${index}`));
    for (const [index, value] of frames.entries()) {
      await publishFrame(bus, value);
      // Interleave another run's frames on the same stream; they must not show up.
      if (index % 2 === 0) await publishFrame(bus, textFrame(otherRun, `other ${index}`));
    }
    const stored = await readStored(bus, {
      stream: names.streams.events,
      subject: names.events(runId),
      schema: EventEnvelope,
    });
    expect(stored.map((item) => item.envelope)).toEqual(frames.map((value) => ({ v: 1, frame: value })));
    expect(stored.every((item) => item.subject === names.events(runId) && item.invalid === undefined)).toBe(
      true,
    );
    const seqs = stored.map((item) => item.seq);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    expect(new Set(seqs).size).toBe(seqs.length);
    expect(stored.at(-1)?.pending).toBe(0);

    expect(
      await readStored(bus, {
        stream: names.streams.events,
        subject: names.events(randomUUID()),
        schema: EventEnvelope,
      }),
    ).toEqual([]);

    // Read one direct get each: all of them when they are few, the rest through a consumer when
    // there are more; the same items either way.
    for (const few of [3, 7, 20]) {
      const read = await readStored(bus, {
        stream: names.streams.events,
        subject: names.events(runId),
        schema: EventEnvelope,
        few,
      });
      expect(read.map((item) => [item.seq, item.envelope])).toEqual(
        stored.map((item) => [item.seq, item.envelope]),
      );
    }
    expect(
      await readStored(bus, {
        stream: names.streams.events,
        subject: names.events(randomUUID()),
        schema: EventEnvelope,
        few: 4,
      }),
    ).toEqual([]);
  });

  it('readStored of a settled subject stops at its newest message, with the same items', async () => {
    const { names } = bus;
    const runId = randomUUID();
    const frames = Array.from({ length: 5 }, (_, index) => textFrame(runId, `part ${index}`));
    for (const [index, value] of frames.entries()) {
      await publishFrame(bus, value);
      if (index % 2 === 0) await publishFrame(bus, textFrame(randomUUID(), `other ${index}`));
    }
    // Requests counted on the real connection: each direct get is one.
    const gets = countStoredGets(bus);
    const read = (subject: string, few: number, settled: boolean) =>
      readStored(bus, { stream: names.streams.events, subject, schema: EventEnvelope, few, settled });
    try {
      const all = await read(names.events(runId), 8, false);
      expect(all.map((item) => item.envelope?.frame)).toEqual(frames);
      for (const few of [2, 5, 8]) {
        expect((await read(names.events(runId), few, true)).map((item) => [item.seq, item.envelope])).toEqual(
          all.map((item) => [item.seq, item.envelope]),
        );
      }
      // As many requests as without `settled` (five gets and one for the newest), not one more.
      gets.count = 0;
      await read(names.events(runId), 8, true);
      expect(gets.count).toBe(6);
      gets.count = 0;
      expect(await read(names.events(randomUUID()), 8, true)).toEqual([]);
      expect(gets.count).toBe(2);
      const single = randomUUID();
      await publishFrame(bus, textFrame(single, 'only'));
      gets.count = 0;
      expect((await read(names.events(single), 8, true)).map((item) => item.envelope?.frame.type)).toEqual([
        'text',
      ]);
      expect(gets.count).toBe(2);
    } finally {
      gets.restore();
    }
  });

  it('readStored reports a stored message that does not parse instead of throwing', async () => {
    const { names } = bus;
    const runId = randomUUID();
    await publishFrame(bus, textFrame(runId, 'good'));
    await bus.js.publish(names.events(runId), new TextEncoder().encode('{"v":2}'));
    const stored = await readStored(bus, {
      stream: names.streams.events,
      subject: names.events(runId),
      schema: EventEnvelope,
    });
    expect(stored).toHaveLength(2);
    expect(stored[0]?.envelope?.frame).toMatchObject({ type: 'text', content: 'good' });
    expect(stored[1]?.envelope).toBeUndefined();
    expect(stored[1]?.invalid).toBeInstanceOf(InvalidEnvelopeError);
    const readOneByOne = await readStored(bus, {
      stream: names.streams.events,
      subject: names.events(runId),
      schema: EventEnvelope,
      few: 8,
    });
    expect(readOneByOne.map((item) => [item.seq, item.envelope, item.invalid?.name])).toEqual(
      stored.map((item) => [item.seq, item.envelope, item.invalid?.name]),
    );
  });

  it('readOrdered resumes after a sequence and then follows live messages', async () => {
    const { names } = bus;
    const runId = randomUUID();
    const acks = [];
    for (let index = 0; index < 3; index++)
      acks.push(await publishFrame(bus, textFrame(runId, `old ${index}`)));
    const resumeAfter = acks[0]!.seq;

    const reader = await readOrdered(bus, {
      stream: names.streams.events,
      subject: names.events(runId),
      schema: EventEnvelope,
      startSeq: resumeAfter + 1,
    });
    const received: Array<{ seq: number; content: string }> = [];
    let liveSent = false;
    try {
      for await (const item of reader) {
        const value = item.envelope?.frame;
        received.push({ seq: item.seq, content: value?.type === 'text' ? value.content : '?' });
        if (received.length === 2 && !liveSent) {
          liveSent = true;
          await publishFrame(bus, textFrame(runId, 'live'));
        }
        if (received.length === 3) break;
      }
    } finally {
      await reader.close();
    }
    expect(received.map((item) => item.content)).toEqual(['old 1', 'old 2', 'live']);
    expect(received.every((item) => item.seq > resumeAfter)).toBe(true);
    expect(received[0]?.seq).toBe(acks[1]!.seq);
  });

  it('close() on a reader that is not being iterated returns promptly', { timeout: 10_000 }, async () => {
    const { names } = bus;
    const runId = randomUUID();
    await publishFrame(bus, textFrame(runId, 'unread'));
    const reader = await readOrdered(bus, {
      stream: names.streams.events,
      subject: names.events(runId),
      schema: EventEnvelope,
    });
    await reader.close();
    // Closing twice is harmless.
    await reader.close();

    const idle = await readOrdered(bus, {
      stream: names.streams.events,
      subject: names.events(randomUUID()),
      schema: EventEnvelope,
    });
    await idle.close();
  });

  it('a reader that is done leaves no consumer on the server', { timeout: 60_000 }, async () => {
    const { names } = bus;
    const stream = names.streams.events;
    const consumers = async () => (await bus.jsm.streams.info(stream)).state.consumer_count;
    const before = await consumers();
    const runId = randomUUID();
    for (let index = 0; index < 3; index++) await publishFrame(bus, textFrame(runId, `part ${index}`));
    // Read whole (readStored), read and closed mid-way, and read live then closed.
    expect(
      await readStored(bus, { stream, subject: names.events(runId), schema: EventEnvelope }),
    ).toHaveLength(3);
    const partly = await readOrdered(bus, { stream, subject: names.events(runId), schema: EventEnvelope });
    const iterator = partly[Symbol.asyncIterator]();
    expect((await iterator.next()).value?.envelope?.frame).toMatchObject({ content: 'part 0' });
    const live = await readOrdered(bus, {
      stream,
      subject: names.events(randomUUID()),
      schema: EventEnvelope,
    });
    expect(await consumers()).toBeGreaterThan(before);
    await partly.close();
    await live.close();
    // Removed with a request each, not awaited by close(): nats-server's own threshold for
    // an idle ordered consumer is five minutes, so only the removal brings the count back now.
    await vi.waitFor(async () => expect(await consumers()).toBe(before), { timeout: 30_000, interval: 100 });
  });
});
