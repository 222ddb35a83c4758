/**
 * What JetStream costs alone on this machine (issue 9): the floor under every streamed frame.
 * Publishes text-frame-sized envelopes (with a traceparent and a Nats-Msg-Id header, as the
 * writer does) to a file-backed limits stream like EVENTS: awaited one by one, pipelined, and as
 * plain core publishes; then reads them back with an ordered consumer as the gateway does.
 * Reports messages/s and CPU per 1,000 messages (client and nats-server), and how many runs at
 * one frame per token and 20 tokens/s that rate would carry. Prints a table and one JSON line.
 *
 *   node test/load/jetstream-publish.ts [--messages 20000] [--window 256]
 */
import { parseArgs } from 'node:util';
import { DeliverPolicy, jetstream, jetstreamManager, RetentionPolicy, StorageType } from '@nats-io/jetstream';
import { connect, headers } from '@nats-io/transport-node';
import { testUrls, uniqueName } from '../support/urls.ts';
import { cpuMeter, findPid, loadAverage } from './support/proc.ts';
import { distribution, rounded, table } from './support/stats.ts';

const { values } = parseArgs({
  options: {
    messages: { type: 'string', default: '20000' },
    window: { type: 'string', default: '256' },
  },
});
const total = Number(values.messages);
const window = Number(values.window);

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
const natsPid = findPid('nats-server');
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
