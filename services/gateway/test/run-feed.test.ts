import { randomUUID } from 'node:crypto';
import { type Bus, connectBus, ensureStreams, publishFrame, republishesTo } from '@quill/bus';
import { frame } from '@quill/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  closeTestBus,
  countStoredGets,
  openTestBus,
  TEST_STREAM_SETTINGS,
} from '../../../test/support/test-bus.ts';
import { testUrls, uniqueName } from '../../../test/support/urls.ts';
import { createRunFeeds, type FeedSubscription } from '../src/run-feed.ts';

/** Streams as this version creates them: EVENTS republishes, each feed subscribes per run. */
let liveBus: Bus;
/** EVENTS created before the republish existed: the gateway falls back to its tap. */
let tapBus: Bus;
let bus: Bus;

beforeAll(async () => {
  liveBus = await openTestBus('f', 'run-feed-test');
  tapBus = await connectBus({ url: testUrls.nats, namespace: uniqueName('g'), name: 'run-feed-tap-test' });
  await tapBus.jsm.streams.add({
    name: tapBus.names.streams.events,
    subjects: [...tapBus.names.eventSubjects],
  });
  // The upsert keeps the stream as it is (2.9 cannot add a republish to it) instead of failing.
  await ensureStreams(tapBus, TEST_STREAM_SETTINGS);
});

afterAll(async () => {
  await closeTestBus(liveBus);
  await closeTestBus(tapBus);
});

async function publishTexts(runId: string, contents: string[]): Promise<number[]> {
  const seqs: number[] = [];
  for (const content of contents) {
    seqs.push((await publishFrame(bus, frame('text', runId, { agent: 'writer', content }))).seq);
  }
  return seqs;
}

/** Reads `count` items and returns their sequences and contents. */
async function take(subscription: FeedSubscription, count: number): Promise<Array<[number, string]>> {
  const taken: Array<[number, string]> = [];
  const iterator = subscription[Symbol.asyncIterator]();
  while (taken.length < count) {
    const result = await iterator.next();
    if (result.done) break;
    const value = result.value.item.envelope!.frame;
    taken.push([result.value.seq, value.type === 'text' ? value.content : value.type]);
    expect(result.value.sse).toContain(`id: ${result.value.seq}\n`);
  }
  return taken;
}

const consumersOnEvents = async () =>
  (await bus.jsm.streams.info(bus.names.streams.events)).state.consumer_count;

describe.each(['live', 'tap'] as const)('run feeds (%s), fanned out to the streams of each run', (mode) => {
  beforeAll(() => {
    bus = mode === 'live' ? liveBus : tapBus;
  });

  it(`reads ${mode === 'live' ? 'through per-run subscriptions, no consumer' : 'through one consumer'}`, async () => {
    expect(await republishesTo(bus, bus.names.streams.events, bus.names.liveMapping)).toBe(mode === 'live');
    const feeds = createRunFeeds(bus);
    const stream = feeds.subscribe(randomUUID(), 0);
    await stream.ready;
    expect(await consumersOnEvents()).toBe(mode === 'live' ? 0 : 1);
    stream.close();
  });

  it('gives every stream each frame after its Last-Event-ID once, in order, live', async () => {
    const feeds = createRunFeeds(bus);
    const runId = randomUUID();
    const seqs = await publishTexts(runId, ['a', 'b', 'c']);
    const first = feeds.subscribe(runId, 0);
    await first.ready;
    expect(await take(first, 3)).toEqual([
      [seqs[0], 'a'],
      [seqs[1], 'b'],
      [seqs[2], 'c'],
    ]);
    // A second stream resuming after the first frame joins the same feed.
    const second = feeds.subscribe(runId, seqs[0]!);
    const more = await publishTexts(runId, ['d']);
    expect(await take(second, 3)).toEqual([
      [seqs[1], 'b'],
      [seqs[2], 'c'],
      [more[0], 'd'],
    ]);
    expect(await take(first, 1)).toEqual([[more[0], 'd']]);
    first.close();
    second.close();
  });

  it('starts a launch’s own stream from the first frame it stored, without reading it back', async () => {
    const feeds = createRunFeeds(bus);
    const runId = randomUUID();
    const started = frame('run_started', runId, {
      session_id: randomUUID(),
      project_id: randomUUID(),
      generation_mode: 'fast',
    });
    const stored = await publishFrame(bus, started);
    // Stored after the launch's first frame, before its stream opened.
    const seqs = await publishTexts(runId, ['a']);
    const gets = countStoredGets(bus);
    try {
      const stream = feeds.subscribe(runId, 0, { seq: stored.seq, frame: started });
      await stream.ready;
      // Read after the first frame only: `a`, then the get that finds nothing more.
      expect(gets.count).toBe(2);
      const more = await publishTexts(runId, ['b']);
      const seeded = (await stream[Symbol.asyncIterator]().next()).value;
      expect([seeded?.seq, seeded?.item.envelope?.frame.type]).toEqual([stored.seq, 'run_started']);
      expect(await take(stream, 2)).toEqual([
        [seqs[0], 'a'],
        [more[0], 'b'],
      ]);
      // A second stream of the run from the beginning gets the same frames from the feed.
      const again = feeds.subscribe(runId, 0);
      expect(await take(again, 3)).toEqual([
        [stored.seq, 'run_started'],
        [seqs[0], 'a'],
        [more[0], 'b'],
      ]);
      // Another gateway reads it back from EVENTS: the same SSE text, byte for byte.
      const elsewhere = createRunFeeds(bus).subscribe(runId, 0);
      const readBack = await elsewhere[Symbol.asyncIterator]().next();
      expect(readBack.value?.seq).toBe(stored.seq);
      expect(readBack.value?.sse).toBe(seeded?.sse);
      stream.close();
      again.close();
      elsewhere.close();
    } finally {
      gets.restore();
    }
  });

  it('reads the gap by sequence when a stream resumes from before what the feed holds', async () => {
    const feeds = createRunFeeds(bus);
    const runId = randomUUID();
    const seqs = await publishTexts(runId, ['a', 'b', 'c', 'd']);
    // The feed starts after `b`; a stream from the beginning needs `a` and `b` from the stream.
    const late = feeds.subscribe(runId, seqs[1]!);
    await late.ready;
    const early = feeds.subscribe(runId, 0);
    expect(await take(early, 4)).toEqual([
      [seqs[0], 'a'],
      [seqs[1], 'b'],
      [seqs[2], 'c'],
      [seqs[3], 'd'],
    ]);
    const more = await publishTexts(runId, ['e']);
    expect(await take(early, 1)).toEqual([[more[0], 'e']]);
    expect(await take(late, 3)).toEqual([
      [seqs[2], 'c'],
      [seqs[3], 'd'],
      [more[0], 'e'],
    ]);
    late.close();
    early.close();
  });

  it('holds no frame every stream has passed: a stream joining later reads those from the stream', async () => {
    const feeds = createRunFeeds(bus);
    const runId = randomUUID();
    const first = feeds.subscribe(runId, 0);
    await first.ready;
    const passed = await publishTexts(runId, ['a', 'b', 'c']);
    expect(await take(first, 3)).toEqual([
      [passed[0], 'a'],
      [passed[1], 'b'],
      [passed[2], 'c'],
    ]);
    // The next frame arrives once the only stream has passed the three: the feed lets them go.
    const [held] = await publishTexts(runId, ['d']);
    expect(await take(first, 1)).toEqual([[held, 'd']]);

    const gets = countStoredGets(bus);
    try {
      const second = feeds.subscribe(runId, 0);
      await second.ready;
      expect(await take(second, 4)).toEqual([
        [passed[0], 'a'],
        [passed[1], 'b'],
        [passed[2], 'c'],
        [held, 'd'],
      ]);
      // One read by sequence for each passed frame; `d` was still held (nothing came after it).
      expect(gets.count).toBe(3);
      second.close();
    } finally {
      gets.restore();
      first.close();
    }
  });

  it('loses and repeats nothing published while a stream joins, and keeps runs apart', async () => {
    const feeds = createRunFeeds(bus);
    const runId = randomUUID();
    const other = randomUUID();
    const contents = Array.from({ length: 40 }, (_, index) => `t${index}`);
    const publishing = (async () => {
      const seqs: number[] = [];
      for (const [index, content] of contents.entries()) {
        seqs.push(...(await publishTexts(runId, [content])));
        if (index % 4 === 0) await publishTexts(other, [`other ${index}`]);
      }
      return seqs;
    })();
    const stream = feeds.subscribe(runId, 0);
    await stream.ready;
    const seqs = await publishing;
    expect(await take(stream, contents.length)).toEqual(seqs.map((seq, index) => [seq, contents[index]]));
    stream.close();
  });

  it('ends a waiting stream when it is closed, and ends every stream after done', async () => {
    const feeds = createRunFeeds(bus);
    const runId = randomUUID();
    const waiting = feeds.subscribe(runId, 0);
    await waiting.ready;
    const pending = waiting[Symbol.asyncIterator]().next();
    waiting.close();
    expect((await pending).done).toBe(true);

    const stream = feeds.subscribe(runId, 0);
    await stream.ready;
    const done = (await publishFrame(bus, frame('done', runId, {}))).seq;
    const iterator = stream[Symbol.asyncIterator]();
    expect((await iterator.next()).value?.seq).toBe(done);
    expect((await iterator.next()).done).toBe(true);
    stream.close();
  });
});

type Connection = Bus['connection'];

/** The bus with a connection that drops the live frames `lose` picks, as a lossy link would. */
function lossyBus(source: Bus, lose: (data: Uint8Array) => boolean): Bus {
  const connection = new Proxy(source.connection, {
    get(target, property, receiver) {
      if (property !== 'subscribe') return Reflect.get(target, property, receiver);
      return (
        ...[subject, options]: Parameters<Connection['subscribe']>
      ): ReturnType<Connection['subscribe']> => {
        const callback = options?.callback;
        if (!callback) return target.subscribe(subject, options);
        return target.subscribe(subject, {
          ...options,
          callback: (error, message) => {
            if (!error && lose(message.data)) return;
            callback(error, message);
          },
        });
      };
    },
  });
  return { ...source, connection };
}

describe('run feeds (live): a frame the core subscription missed', () => {
  it('is read by sequence before the next one is shown, so the stream has no gap', async () => {
    bus = liveBus;
    const marker = new TextEncoder().encode('lost on the way');
    const contains = (data: Uint8Array) => Buffer.from(data).includes(Buffer.from(marker));
    const feeds = createRunFeeds(lossyBus(liveBus, contains));
    const runId = randomUUID();
    const stream = feeds.subscribe(runId, 0);
    await stream.ready;
    const seqs = await publishTexts(runId, ['a', 'lost on the way', 'c']);
    expect(await take(stream, 3)).toEqual([
      [seqs[0], 'a'],
      [seqs[1], 'lost on the way'],
      [seqs[2], 'c'],
    ]);
    stream.close();
  });
});
