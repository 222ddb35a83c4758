import { randomUUID } from 'node:crypto';
import { EventEnvelope, type SseFrame } from '@quill/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type PrivateServer, startPrivateNats } from '../../../test/support/private-servers.ts';
import { uniqueName } from '../../../test/support/urls.ts';
import {
  type Bus,
  connectBus,
  countStored,
  ensureStreams,
  publishFrame,
  readOrdered,
  readStored,
} from '../src/index.ts';

// A nats-server of this file's own: it is frozen and restarted here, which the machine's shared
// one must never be.
let nats: PrivateServer;
let bus: Bus;

beforeAll(async () => {
  nats = await startPrivateNats();
  bus = await connectBus({
    url: nats.url,
    namespace: uniqueName('restart'),
    name: 'broker-restart-test',
    publishRetry: { ackTimeoutMs: 1000, deadlineMs: 30_000 },
  });
  await ensureStreams(bus, {
    eventsMaxAgeHours: 1,
    runAckWaitSeconds: 30,
    runMaxDeliver: 5,
    taskAckWaitSeconds: 30,
  });
}, 60_000);

afterAll(async () => {
  await bus?.close();
  await nats?.close();
});

const text = (runId: string, content: string): SseFrame => ({
  type: 'text',
  run_id: runId,
  ts: new Date().toISOString(),
  agent: 'writer',
  content,
});
const contentOf = (frame: SseFrame | undefined) => (frame?.type === 'text' ? frame.content : undefined);

describe('a broker restart', () => {
  it('retries publishes whose ack was lost and stores each once', async () => {
    const runId = randomUUID();
    // Frozen, the server takes the bytes into its socket and never stores or acks them; killed,
    // they are lost: only a publish sent again reaches the restarted server.
    nats.freeze();
    const loud = publishFrame(bus, text(runId, 'a'), { msgId: `${runId}:a` });
    const quiet = publishFrame(bus, text(runId, 'b'), { quiet: true });
    await new Promise((resolve) => setTimeout(resolve, 1500));
    await nats.restart();
    const acks = await Promise.all([loud, quiet]);
    expect(acks.map((ack) => ack.stream)).toEqual([bus.names.streams.events, bus.names.streams.events]);
    const subject = bus.names.events(runId);
    expect(await countStored(bus, bus.names.streams.events, subject)).toBe(2);
    const stored = await readStored(bus, {
      stream: bus.names.streams.events,
      subject,
      schema: EventEnvelope,
    });
    expect(stored.map((item) => contentOf(item.envelope?.frame)).sort()).toEqual(['a', 'b']);
  }, 60_000);

  it('an ordered read goes on from the next sequence after the server is back', async () => {
    const runId = randomUUID();
    const subject = bus.names.events(runId);
    for (const delta of ['1', '2']) await publishFrame(bus, text(runId, delta));
    const reader = await readOrdered(bus, {
      stream: bus.names.streams.events,
      subject,
      schema: EventEnvelope,
    });
    const iterator = reader[Symbol.asyncIterator]();
    try {
      const before = [await iterator.next(), await iterator.next()].map((result) => result.value!.seq);
      await nats.restart();
      for (const delta of ['3', '4']) await publishFrame(bus, text(runId, delta));
      // A bound, not a measurement: nats.js alone notices the restart only after two missed idle
      // heartbeats and retries with a 30 s backoff; the benchmark measures the real figure.
      const next = () =>
        Promise.race([
          iterator.next(),
          new Promise<never>((_, reject) =>
            setTimeout(() => reject(new Error('no frame 15 s after the restart')), 15_000),
          ),
        ]);
      const after = [await next(), await next()].map((result) => result.value!);
      expect(after.map((item) => contentOf(item.envelope?.frame))).toEqual(['3', '4']);
      // Each sequence once, in order, across the restart.
      const seqs = [...before, ...after.map((item) => item.seq)];
      expect([...seqs].sort((a, b) => a - b)).toEqual(seqs);
      expect(new Set(seqs).size).toBe(4);
    } finally {
      await reader.close();
    }
  }, 60_000);
});
