/**
 * What JetStream costs alone on this machine: the floor under every streamed frame.
 * Publishes text-frame-sized envelopes (with a traceparent and a Nats-Msg-Id header, as the
 * writer does) to a file-backed limits stream like EVENTS: awaited one by one, pipelined (through
 * the JetStream client, and through Quill's one-ack-inbox publisher), and as plain core publishes; then reads them back with an ordered consumer as the gateway does.
 * Then live delivery to 300 runs at 20 frames/s each, read by one ordered consumer per run versus
 * one consumer on `run.*.events` (what the gateway's tap does). Reports messages/s and CPU per
 * 1,000 messages (client and nats-server), and how many runs at one frame per token and 20
 * tokens/s the pipelined publish rate would carry. Prints a table and one JSON line.
 *
 *   node test/load/jetstream-publish.ts [--messages 20000] [--window 256]
 */
import { parseArgs } from 'node:util';
import { DeliverPolicy, jetstream, jetstreamManager, RetentionPolicy, StorageType } from '@nats-io/jetstream';
import { connect, headers } from '@nats-io/transport-node';
import { createAckedPublisher } from '@quill/bus';
import { testUrls, uniqueName } from '../support/urls.ts';
import { cpuMeter, loadAverage, natsServerPid } from './support/proc.ts';
import { distribution, rounded, table } from './support/stats.ts';

const { values } = parseArgs({
  options: {
    messages: { type: 'string', default: '20000' },
    window: { type: 'string', default: '256' },
  },
});
const total = Number(values.messages);
const window = Number(values.window);
/** Runs and seconds of the live-delivery comparison. */
const RUNS = 300;
const LIVE_SECONDS = 3;

const name = uniqueName('BENCH_JS');
const subject = `${name}.run.r1.events`;
const frame = {
  v: 1,
  frame: {
    type: 'text',
    run_id: '0b6f3f1e-3a4c-4c39-9d55-6d8f2a4c1b7e',
    ts: new Date().toISOString(),
    agent: 'writer',
    content: '雨夜里旧书店的灯还亮着',
  },
};
const payload = new TextEncoder().encode(JSON.stringify(frame));
const traceparent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';

const nats = await connect({ servers: testUrls.nats, name: 'bench-jetstream' });
const jsm = await jetstreamManager(nats);
const js = jetstream(nats);
await jsm.streams.add({
  name,
  subjects: [`${name}.>`],
  retention: RetentionPolicy.Limits,
  storage: StorageType.File,
  duplicate_window: 20 * 60 * 1_000_000_000,
});
const natsPid = natsServerPid(testUrls.nats);
const rows: Array<Record<string, number | string>> = [];
let sequence = 0;
const publishOptions = () => {
  const h = headers();
  h.set('traceparent', traceparent);
  return { headers: h, msgID: `bench:${++sequence}` };
};

const measure = async (label: string, count: number, body: () => Promise<number[] | undefined>) => {
  const stopCpu = cpuMeter({ client: process.pid, nats: natsPid });
  const startedAt = performance.now();
  const latencies = await body();
  const seconds = (performance.now() - startedAt) / 1000;
  const cpu = stopCpu();
  const latency = latencies ? distribution(latencies) : undefined;
  rows.push({
    mode: label,
    messages: count,
    per_second: count / seconds,
    latency_p50_ms: latency?.p50 ?? Number.NaN,
    latency_p99_ms: latency?.p99 ?? Number.NaN,
    client_cpu_ms_per_1k: ((cpu.client ?? 0) * 1000) / count,
    nats_cpu_ms_per_1k: ((cpu.nats ?? 0) * 1000) / count,
  });
};

try {
  const serial = Math.min(2000, total);
  await measure('publish, awaited one by one', serial, async () => {
    const latencies: number[] = [];
    for (let index = 0; index < serial; index++) {
      const at = performance.now();
      await js.publish(subject, payload, publishOptions());
      latencies.push(performance.now() - at);
    }
    return latencies;
  });
  await measure(`publish, ${window} in flight`, total, async () => {
    const inFlight = new Set<Promise<unknown>>();
    for (let index = 0; index < total; index++) {
      const sent = js.publish(subject, payload, publishOptions());
      inFlight.add(sent);
      void sent.finally(() => inFlight.delete(sent));
      if (inFlight.size >= window) await Promise.race(inFlight);
    }
    await Promise.all(inFlight);
    return undefined;
  });
  // Quill's quiet path (libs/bus acked-publisher.ts): the same acks, one inbox for all of them.
  const acked = createAckedPublisher(nats, { timeoutMs: 5000 });
  await measure(`publish, ${window} in flight, one ack inbox (Quill)`, total, async () => {
    const inFlight = new Set<Promise<unknown>>();
    for (let index = 0; index < total; index++) {
      const options = publishOptions();
      options.headers.set('Nats-Msg-Id', options.msgID);
      const sent = acked.publish(subject, payload, options.headers);
      inFlight.add(sent);
      void sent.finally(() => inFlight.delete(sent));
      if (inFlight.size >= window) await Promise.race(inFlight);
    }
    await Promise.all(inFlight);
    return undefined;
  });
  await measure('core publish (no ack), then flush', total, async () => {
    for (let index = 0; index < total; index++) {
      const options = publishOptions();
      nats.publish(subject, payload, { headers: options.headers });
    }
    await nats.flush();
    return undefined;
  });
  const stored = (await jsm.streams.info(name)).state.messages;
  await measure('ordered consumer read', stored, async () => {
    const consumer = await js.consumers.get(name, {
      filter_subjects: subject,
      deliver_policy: DeliverPolicy.All,
    });
    const messages = await consumer.consume({ max_messages: 256 });
    let read = 0;
    for await (const message of messages) {
      void message.seq;
      if (++read >= stored) break;
    }
    return undefined;
  });
  // Live delivery as the gateway reads: RUNS runs at 20 frames/s each, paced, read either by one
  // ordered consumer per run (the old gateway: one per SSE stream) or by one consumer on
  // `run.*.events` for all of them (the gateway's tap). Publishes are the same in both.
  const reader = await connect({ servers: testUrls.nats, name: 'bench-jetstream-reader' });
  try {
    for (const mode of ['per-run consumers', 'one wildcard consumer'] as const) {
      const tag = mode === 'per-run consumers' ? 'p' : 'w';
      const subjectOf = (run: number) => `${name}.run.${tag}${run}.events`;
      const readers: Array<{ stop(): void }> = [];
      let received = 0;
      const read = async (filter: string) => {
        const consumer = await jetstream(reader).consumers.get(name, {
          filter_subjects: filter,
          deliver_policy: DeliverPolicy.New,
        });
        const messages = await consumer.consume({ max_messages: 256 });
        readers.push(messages);
        void (async () => {
          for await (const message of messages) {
            void message.seq;
            received++;
          }
        })();
      };
      if (tag === 'p') for (let run = 0; run < RUNS; run++) await read(subjectOf(run));
      else await read(`${name}.run.*.events`);
      await new Promise((resolve) => setTimeout(resolve, 500));
      const live = RUNS * 20 * LIVE_SECONDS;
      await measure(`live delivery, ${RUNS} runs at 20/s: ${mode}`, live, async () => {
        const startedAt = performance.now();
        const sends: Array<Promise<unknown>> = [];
        for (let sent = 0; sent < live; ) {
          for (let burst = 0; burst < 6 && sent < live; burst++, sent++) {
            sends.push(js.publish(subjectOf(sent % RUNS), payload, publishOptions()));
          }
          const wait = startedAt + (sent / (RUNS * 20)) * 1000 - performance.now();
          await new Promise((resolve) => (wait > 0 ? setTimeout(resolve, wait) : setImmediate(resolve)));
        }
        await Promise.all(sends);
        while (received < live) await new Promise((resolve) => setTimeout(resolve, 10));
        return undefined;
      });
      for (const messages of readers) messages.stop();
    }
  } finally {
    await reader.close();
  }
} finally {
  await jsm.streams.delete(name).catch(() => undefined);
  await nats.close();
}

const pipelined = rows[1]!;
const runsAtOneFramePerToken = (pipelined.per_second as number) / 20;
console.log(
  `JetStream alone: ${payload.length}-byte text-frame envelopes to a file-backed stream (load ${loadAverage()})`,
);
console.log(
  table([
    ['mode', 'messages', 'msg/s', 'latency p50', 'latency p99', 'client CPU ms/1k', 'nats-server CPU ms/1k'],
    ...rows.map((row) => [
      row.mode!,
      row.messages!,
      row.per_second!,
      row.latency_p50_ms!,
      row.latency_p99_ms!,
      row.client_cpu_ms_per_1k!,
      row.nats_cpu_ms_per_1k!,
    ]),
  ]),
);
console.log(
  `pipelined publishes alone, all of both cores: ${runsAtOneFramePerToken.toFixed(0)} runs at 20 frames/s (one frame per token)`,
);
console.log(
  JSON.stringify(
    rounded({
      bench: 'jetstream-publish',
      payload_bytes: payload.length,
      load_average: loadAverage(),
      modes: rows,
      runs_at_20_frames_per_s: runsAtOneFramePerToken,
    }),
  ),
);
