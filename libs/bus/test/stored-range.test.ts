import { randomUUID } from 'node:crypto';
import { EventEnvelope, frame, type SseFrame } from '@quill/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTcpProxy, type TcpProxy } from '../../../test/support/tcp-proxy.ts';
import { closeTestBus, TEST_STREAM_SETTINGS } from '../../../test/support/test-bus.ts';
import { testUrls, uniqueName } from '../../../test/support/urls.ts';
import { type Bus, connectBus, ensureStreams, publishFrame, readStored } from '../src/index.ts';

// The bus reaches the machine's nats-server through a proxy this file cuts.
let proxy: TcpProxy;
let bus: Bus;

beforeAll(async () => {
  const target = new URL(testUrls.nats);
  proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 4222) });
  bus = await connectBus({
    url: proxy.urlFor(testUrls.nats),
    namespace: uniqueName('range'),
    name: 'stored-range-test',
  });
  await ensureStreams(bus, TEST_STREAM_SETTINGS);
}, 60_000);

afterAll(async () => {
  proxy?.restore();
  await closeTestBus(bus);
  await proxy?.close();
});

async function storeFrames(runId: string, count: number): Promise<string[]> {
  const contents = Array.from({ length: count }, (_, index) => `片段 ${index}，`);
  await Promise.all(
    contents.map((content) =>
      publishFrame(bus, frame('text', runId, { agent: 'writer', content }), { quiet: true }),
    ),
  );
  return contents;
}

const contentOf = (item: { envelope?: { frame: SseFrame } | undefined }) =>
  item.envelope?.frame.type === 'text' ? item.envelope.frame.content : undefined;

describe('a stored read', () => {
  it('reads every message once, in order, when the connection is lost in the middle of it', async () => {
    const runId = randomUUID();
    // Published one after another from one connection: stored in this order.
    const contents: string[] = [];
    for (let batch = 0; batch < 6; batch++) {
      const stored = await storeFrames(runId, 500);
      contents.push(...stored);
    }
    // Each delivery is a few hundred bytes: the cut falls well inside the 3,000.
    let cutBeforeEnd = false;
    let readEnded = false;
    const cut = proxy.cutAfter(150_000).then(() => {
      cutBeforeEnd = !readEnded;
      proxy.restore();
    });
    const reading = readStored(bus, {
      stream: bus.names.streams.events,
      subject: bus.names.events(runId),
      schema: EventEnvelope,
    });
    // A bound, not a measurement: left to nats.js, the read would go on only after two missed
    // idle heartbeats (~30 s here); the reader itself re-subscribes after the reconnect.
    const read = await Promise.race([
      reading,
      cut.then(
        () =>
          new Promise<never>((_, reject) =>
            setTimeout(() => reject(new Error('the read did not go on 15 s after the cut')), 15_000),
          ),
      ),
    ]);
    readEnded = true;
    await cut;
    expect(cutBeforeEnd).toBe(true);
    expect(read.map(contentOf)).toEqual(contents);
    const seqs = read.map((item) => item.seq);
    expect(new Set(seqs).size).toBe(seqs.length);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    expect(read.at(-1)?.pending).toBe(0);
    // The consumer the cut left behind goes as well as the one that finished the read.
    const consumers = async () => (await bus.jsm.consumers.list(bus.names.streams.events).next()).length;
    while ((await consumers()) > 0) await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await consumers()).toBe(0);
  }, 120_000);

  it('reads only what follows afterSeq, and rejects for a stream that does not exist', async () => {
    const runId = randomUUID();
    const contents = await storeFrames(runId, 5);
    const options = {
      stream: bus.names.streams.events,
      subject: bus.names.events(runId),
      schema: EventEnvelope,
    };
    const all = await readStored(bus, options);
    expect(all.map(contentOf)).toEqual(contents);
    const rest = await readStored(bus, { ...options, afterSeq: all[1]!.seq });
    expect(rest.map((item) => item.seq)).toEqual(all.slice(2).map((item) => item.seq));
    expect(await readStored(bus, { ...options, afterSeq: all.at(-1)!.seq })).toEqual([]);
    await expect(
      readStored(bus, { ...options, stream: `${bus.names.streams.events}_MISSING` }),
    ).rejects.toThrow(/stream not found/);
  });
});
