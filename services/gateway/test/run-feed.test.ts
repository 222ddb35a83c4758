import { randomUUID } from 'node:crypto';
import { type Bus, publishFrame } from '@quill/bus';
import { frame } from '@quill/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeTestBus, openTestBus } from '../../../test/support/test-bus.ts';
import { createRunFeeds, type FeedSubscription } from '../src/run-feed.ts';

let bus: Bus;

beforeAll(async () => {
  bus = await openTestBus('f', 'run-feed-test');
});

afterAll(() => closeTestBus(bus));

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

describe('run feeds: one tap per gateway, fanned out to the streams of each run', () => {
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
