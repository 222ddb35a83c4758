/**
 * Gateways scale out: what one gateway costs for the runs its own clients stream, with one
 * gateway in the fleet and with several. One gateway carries `--runs-per-gateway` runs, then
 * `--gateways` gateways carry that many each (the same per-run rate), and each configuration is
 * measured with both ways a gateway can read EVENTS: per-run subscriptions on the republished
 * frames (`live`, what a stream created by this version gets) and one tap of every run per
 * gateway (`tap`, a stream created before it; docs/decisions/0027-per-run-live-subscriptions.md).
 *
 * The benchmark runs its own nats-server (the machine's has no monitoring port) and reads, while
 * every run streams: each gateway's CPU (/proc) and the bytes the server sent to its connection
 * (`/connz`), the server's CPU and all it sent (`/varz`), per frame the gateway relayed. "vs one
 * gateway" is a gateway's cost per frame of its own clients at G gateways over G times the cost
 * per frame of the single gateway: what it costs next to one gateway carrying all G × N runs
 * (1/G when it pays only for its own runs; the target is ≤ 0.3 at 4). Prints a table and one JSON
 * line.
 *
 *   node test/load/gateway-scaling.ts [--runs-per-gateway 100] [--gateways 4] [--rate 10]
 *                                     [--tokens 400]
 *                                     [--start-every-ms 50] [--sources live,tap]
 */
import { parseArgs } from 'node:util';
import { startPrivateNats } from './support/private-nats.ts';
import { cpuBetween, loadAverage, startCpuSampler } from './support/proc.ts';
import { distribution, rounded, sleep, table } from './support/stats.ts';

const { values } = parseArgs({
  options: {
    'runs-per-gateway': { type: 'string', default: '100' },
    gateways: { type: 'string', default: '4' },
    rate: { type: 'string', default: '10' },
    tokens: { type: 'string', default: '400' },
    'start-every-ms': { type: 'string', default: '50' },
    sources: { type: 'string', default: 'live,tap' },
  },
});
const perGateway = Number(values['runs-per-gateway']);
const fleet = Number(values.gateways);
const tokensPerSecond = Number(values.rate);
const tokens = Number(values.tokens);
const startEveryMs = Number(values['start-every-ms']);
const sources = values.sources.split(',') as Array<'live' | 'tap'>;

const nats = await startPrivateNats();
// Everything below (the stack's services, its clean-up, the bench's own reads) uses this server.
process.env.NATS_URL = nats.url;
const { startBenchStack } = await import('./support/bench-stack.ts');
const { inWaves } = await import('./support/phases.ts');
const { plainReply, streamRun } = await import('./support/runs.ts');
const { uniqueName } = await import('../support/urls.ts');
const { busNames } = await import('@quill/contracts');
const { connect } = await import('@nats-io/transport-node');
const { jetstreamManager } = await import('@nats-io/jetstream');

interface Sample {
  at: number;
  total: number;
  byConnection: Map<string, number>;
}

/** The server's egress (all of it and per connection) every 250 ms. */
function startEgressSampler(): { stop(): Promise<Sample[]> } {
  const samples: Sample[] = [];
  let running = true;
  const loop = (async () => {
    while (running) {
      const [totals, connections] = await Promise.all([nats.totals(), nats.connections()]);
      samples.push({
        at: performance.timeOrigin + performance.now(),
        total: totals.outBytes,
        byConnection: new Map(connections.map((connection) => [connection.name, connection.outBytes])),
      });
      await sleep(250);
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return samples;
    },
  };
}

/** EVENTS as a stream created before the republish: the gateways fall back to their taps. */
async function makeEventsWithoutRepublish(namespace: string): Promise<void> {
  const connection = await connect({ servers: nats.url, name: 'bench-streams' });
  try {
    const names = busNames(namespace);
    const jsm = await jetstreamManager(connection);
    await jsm.streams.add({ name: names.streams.events, subjects: [...names.eventSubjects] });
  } finally {
    await connection.close();
  }
}

const rows: Array<Record<string, unknown>> = [];

async function measure(source: 'live' | 'tap', gateways: number): Promise<void> {
  const namespace = uniqueName('gs');
  if (source === 'tap') await makeEventsWithoutRepublish(namespace);
  const bench = await startBenchStack({
    namespace,
    natsServerPid: nats.pid,
    replicas: { gateway: gateways },
    // The runs' first frames come while all of them are starting; the router's lease renewals
    // and the gateways' heartbeats are the same in every configuration.
    env: {},
  });
  try {
    const runs = perGateway * gateways;
    const reply = { text: plainReply(tokens), tokens_per_second: tokensPerSecond, ttft_ms: 100 };
    await bench.fake.addScript({
      match: { role: 'writer' },
      responses: Array.from({ length: runs + 20 }, () => reply),
    });
    const short = { text: plainReply(5), tokens_per_second: 100, ttft_ms: 50 };
    await bench.fake.addScript({
      match: { role: 'writer' },
      responses: Array.from({ length: 2 * gateways }, () => short),
    });
    const urls = bench.stack.gateways;
    const gatewayIds = bench.stack.services
      .filter((service) => service.name === 'gateway')
      .map((service) => service.instanceId);
    // Warm-up: each gateway relays two short runs.
    await inWaves(2 * gateways, gateways, 0, (index) =>
      streamRun(urls[index % gateways]!, bench.author(index), `warm ${index}`, {
        signal: AbortSignal.timeout(60_000),
      }),
    );
    const pids = bench.pids();
    const sampler = startCpuSampler({ ...pids, 'nats-server': nats.pid });
    const egress = startEgressSampler();
    const load = loadAverage();
    // At most 20 starts a second across the fleet: the figure is the relay, not a launch storm
    // (at 50 a second, 2 cores answer some launches with 500s and some runs stall upstream).
    const spreadMs = runs * startEveryMs;
    // A run that stalls upstream (no terminal frame) would hold the benchmark until its wall
    // clock: past twice its length it is cut off and counted as a failure.
    const deadline = AbortSignal.timeout(spreadMs + (2000 * tokens) / tokensPerSecond + 60_000);
    const traces = await inWaves(runs, runs, spreadMs, (index) =>
      streamRun(urls[index % gateways]!, bench.author(index), `scale ${index}`, { signal: deadline }),
    );
    const cpuSamples = sampler.stop();
    const egressSamples = await egress.stop();
    const streaming = traces.filter((trace) => trace.text.length > 0);
    const from = Math.max(...streaming.map((trace) => trace.text[0]!.receivedAt)) + 1000;
    const to = Math.min(...streaming.map((trace) => trace.text.at(-1)!.receivedAt));
    const window = cpuBetween(cpuSamples, from, to);
    const inside = egressSamples.filter((sample) => sample.at >= from && sample.at <= to);
    const first = inside[0];
    const last = inside.at(-1);
    const perGatewayFigures = gatewayIds.map((id, gateway) => {
      const frames = traces
        .filter((_, index) => index % gateways === gateway)
        .reduce(
          (total, trace) =>
            total + trace.text.filter((at) => at.receivedAt >= from && at.receivedAt <= to).length,
          0,
        );
      // Frames counted over the CPU window's span (its samples are 250 ms apart).
      const framesInCpu = (frames * window.ms) / Math.max(1, to - from);
      const connection = [...(last?.byConnection.keys() ?? [])].find((name) => name.endsWith(`:${id}`));
      const bytes =
        connection && first && last
          ? last.byConnection.get(connection)! - (first.byConnection.get(connection) ?? 0)
          : Number.NaN;
      const framesInEgress =
        first && last ? (frames * (last.at - first.at)) / Math.max(1, to - from) : Number.NaN;
      return {
        frames,
        cpu_us_per_frame: ((window.cpu[id] ?? 0) * 1000) / Math.max(1, framesInCpu),
        cpu_ms_per_s: ((window.cpu[id] ?? 0) * 1000) / Math.max(1, window.ms),
        egress_bytes_per_frame: bytes / Math.max(1, framesInEgress),
      };
    });
    const frames = perGatewayFigures.reduce((total, entry) => total + entry.frames, 0);
    const framesInCpu = (frames * window.ms) / Math.max(1, to - from);
    const framesInEgress =
      first && last ? (frames * (last.at - first.at)) / Math.max(1, to - from) : Number.NaN;
    const mean = (pick: (entry: (typeof perGatewayFigures)[number]) => number) =>
      perGatewayFigures.reduce((total, entry) => total + pick(entry), 0) / perGatewayFigures.length;
    rows.push({
      source,
      gateways,
      runs,
      load_average: load,
      failures: traces.filter((trace) => trace.failure).length,
      failure_examples: [...new Set(traces.flatMap((trace) => (trace.failure ? [trace.failure] : [])))].slice(
        0,
        3,
      ),
      window_s: (to - from) / 1000,
      frames_in_window: frames,
      frame_gap_p50_ms: distribution(
        streaming.flatMap((trace) =>
          trace.text.slice(1).map((at, index) => at.receivedAt - trace.text[index]!.receivedAt),
        ),
      ).p50,
      gateway_cpu_us_per_frame: mean((entry) => entry.cpu_us_per_frame),
      gateway_cpu_ms_per_s: mean((entry) => entry.cpu_ms_per_s),
      gateway_egress_bytes_per_frame: mean((entry) => entry.egress_bytes_per_frame),
      nats_cpu_us_per_frame: ((window.cpu['nats-server'] ?? 0) * 1000) / Math.max(1, framesInCpu),
      nats_egress_bytes_per_frame:
        first && last ? (last.total - first.total) / Math.max(1, framesInEgress) : Number.NaN,
      per_gateway: perGatewayFigures,
    });
    // Each configuration as it is measured, should a later one not finish.
    console.log(JSON.stringify(rounded({ configuration: rows.at(-1) })));
  } finally {
    await bench.stop();
  }
}

try {
  for (const source of sources) {
    for (const gateways of [1, fleet]) {
      console.log(
        `measuring ${source}, ${gateways} gateway(s), ${perGateway * gateways} runs (load ${loadAverage()})`,
      );
      await measure(source, gateways);
    }
  }
} finally {
  await nats.stop();
}

// A gateway's cost per own frame at G gateways, next to one gateway carrying all G × N runs.
for (const row of rows) {
  const single = rows.find((entry) => entry.source === row.source && entry.gateways === 1);
  const gateways = row.gateways as number;
  row.cpu_vs_one_gateway =
    (row.gateway_cpu_us_per_frame as number) / (gateways * (single?.gateway_cpu_us_per_frame as number));
  row.egress_vs_one_gateway =
    (row.gateway_egress_bytes_per_frame as number) /
    (gateways * (single?.gateway_egress_bytes_per_frame as number));
}

console.log(
  `gateway scaling: ${perGateway} runs per gateway at ${tokensPerSecond} tokens/s, ${tokens} tokens each (load ${loadAverage()})`,
);
console.log(
  table([
    [
      'source',
      'gateways',
      'runs',
      'load',
      'fail',
      'gw CPU µs/frame',
      'gw CPU ms/s',
      'gw egress B/frame',
      'vs one gw (CPU / bytes)',
      'nats CPU µs/frame',
      'nats egress B/frame',
    ],
    ...rows.map((row) => [
      row.source as string,
      row.gateways as number,
      row.runs as number,
      row.load_average as number,
      row.failures as number,
      row.gateway_cpu_us_per_frame as number,
      row.gateway_cpu_ms_per_s as number,
      row.gateway_egress_bytes_per_frame as number,
      `${(row.cpu_vs_one_gateway as number).toFixed(2)} / ${(row.egress_vs_one_gateway as number).toFixed(2)}`,
      row.nats_cpu_us_per_frame as number,
      row.nats_egress_bytes_per_frame as number,
    ]),
  ]),
);
const at = (source: string) => rows.find((row) => row.source === source && row.gateways === fleet);
console.log(
  JSON.stringify(
    rounded({
      bench: 'gateway-scaling',
      runs_per_gateway: perGateway,
      gateways: fleet,
      tokens_per_second: tokensPerSecond,
      load_average: loadAverage(),
      cpu_vs_one_gateway: at('live')?.cpu_vs_one_gateway ?? null,
      egress_vs_one_gateway: at('live')?.egress_vs_one_gateway ?? null,
      tap_cpu_vs_one_gateway: at('tap')?.cpu_vs_one_gateway ?? null,
      configurations: rows,
    }),
  ),
);
