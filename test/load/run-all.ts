/**
 * `npm run bench`: the standard benchmark set of docs/, one after the other (each starts its
 * own stack: every service a process of its own, the fake LLM a process of its own), then the
 * figures side by side with their targets (per-frame and per-token delay, reasoning frames and the
 * peer comparison included). Each benchmark prints its own table on the way.
 * Prints a summary table and one JSON line.
 *
 *   node test/load/run-all.ts [--only relay-overhead,capacity,…]
 */
import { parseArgs } from 'node:util';
import { runBenchScript } from './support/bench-script.ts';
import { loadAverage } from './support/proc.ts';
import { rounded, table } from './support/stats.ts';

const STANDARD: ReadonlyArray<{ name: string; args: string[] }> = [
  { name: 'relay-overhead', args: ['--levels', '1,50,100,200', '--tokens', '200'] },
  // Where figure 2's milliseconds go, span by span (tracing on).
  { name: 'launch-path', args: ['--runs', '20'] },
  { name: 'coalescing', args: ['--rates', '20,33,50,100', '--seconds', '4'] },
  { name: 'reasoning-frames', args: ['--rates', '50,200,0', '--runs', '10'] },
  { name: 'capacity', args: ['--levels', '100,200,300,400,500,600'] },
  // Figure 3 as a count: one capacity run is one draw on this shared machine.
  { name: 'capacity-attempts', args: ['--attempts', '3', '--levels', '400,500'] },
  { name: 'writer-scaling', args: ['--window-s', '15'] },
  // Quill next to the OpenAI Agents SDK behind a bare SSE route and a direct client.
  { name: 'peer', args: ['--levels', '1,50,100'] },
  { name: 'idle-sse', args: ['--streams', '5000'] },
  // 1 gateway × 100 runs vs 4 × 100, each with per-run subscriptions and with the tap.
  { name: 'gateway-scaling', args: ['--runs-per-gateway', '100', '--gateways', '4'] },
  { name: 'memory', args: ['--runs', '200'] },
  // The writer's model client alone, its frame path alone, and nats-server's cost of the frames'
  // duplicate ids.
  { name: 'model-stream', args: [] },
  { name: 'frame-publish', args: [] },
  { name: 'broker-dedupe', args: ['--seconds', '30'] },
  // The end-of-run reads of a run's frames (billing's settlement record, the router's archive).
  { name: 'stored-read', args: [] },
  // Last: it pushes tens of thousands of messages through nats-server, whose clean-up afterwards
  // would otherwise land in the next benchmark's figures.
  { name: 'jetstream-publish', args: ['--messages', '20000'] },
];

const { values } = parseArgs({ options: { only: { type: 'string' } } });
const only = values.only?.split(',');
/** The parts of each benchmark's JSON line the summary reads. */
interface Distribution {
  p50: number;
  p99: number;
}
interface RelayLevel {
  concurrency: number;
  added_ms: Distribution;
  token_added_ms: Distribution;
  held_ms: Distribution;
  direct_delay_ms: Distribution;
  ttft_overhead_ms: { p50: number; direct_p50: number; to_model_p50: number; first_token_relay_p50: number };
  messages_per_1k_tokens: number;
  cpu_ms_per_1k_tokens: number;
  steady_cpu_ms_per_1k_tokens: number;
  steady_cpu_ms_per_1k_tokens_by_process: Record<string, number>;
}
interface Results {
  'relay-overhead'?: {
    levels: RelayLevel[];
    ttft_overhead_ms?: {
      runs: number;
      warmup_runs?: number;
      cold_p50?: number;
      p50: number;
      p95: number;
      to_model_p50: number;
      first_token_relay_p50: number;
    };
  };
  coalescing?: {
    rates: Array<{
      tokens_per_second: number | string;
      frames_per_1k_tokens: number;
      frame_delay_ms: Distribution;
    }>;
  };
  'jetstream-publish'?: { modes: Array<{ mode: string; per_second: number; nats_cpu_ms_per_1k: number }> };
  capacity?: {
    capacity: number;
    stopped_by: string;
    levels: Array<{ level: number; token_p50_ms: number; token_p99_ms: number; frame_p99_ms: number }>;
  };
  'capacity-attempts'?: {
    attempts: number;
    levels: Array<{ level: number; measured: number; held: number; frame_p99_ms: number[] }>;
  };
  'reasoning-frames'?: {
    rates: Array<{ tokens_per_second: number | string; thinking_frames_per_1k_reasoning_tokens: number }>;
  };
  peer?: {
    levels: Array<{
      system: string;
      concurrency: number;
      launch_ms: Distribution;
      token_delay_ms: Distribution;
      cpu_ms_per_1k_tokens_with_client: number;
    }>;
  };
  'launch-path'?: { to_model_p50_ms: number };
  'writer-scaling'?: {
    speedup_1_to_max: number;
    configurations: Array<{ writers: number; runs_per_minute: number }>;
  };
  'gateway-scaling'?: {
    gateways: number;
    cpu_vs_one_gateway: number | null;
    egress_vs_one_gateway: number | null;
    tap_cpu_vs_one_gateway: number | null;
  };
  memory?: {
    runs: number;
    services: Array<{ instance: string; idle_mb: number; peak_mb: number }>;
    extra_writer: { ready_ms: number; cpu_ms_to_ready: number; idle_mb: number };
  };
  'model-stream'?: { best_cpu_us_per_token: number; runs: number; rate: number };
  'frame-publish'?: {
    best_client_us_per_frame: number;
    runs: number;
    rate: number;
    rounds: Array<{ nats_us_per_frame: number }>;
  };
  'broker-dedupe'?: {
    rate: number;
    variants: Array<{
      variant: string;
      nats_cpu_us_per_frame: number;
      rss_bytes_per_frame: number;
      id_bytes_per_frame: number | null;
      ids_at_full_window_mb: number | null;
    }>;
  };
  'stored-read'?: {
    runs: number;
    frames: number;
    rows: Array<{ width: number; readerBest: number; reader: number; nats: number; msPerRun: number }>;
  };
  'idle-sse'?: {
    kb_per_stream: number;
    streams: number;
    nats_server_kb_per_stream: number;
    event_consumers_open: number;
  };
}
const results: Record<string, unknown> = {};
const startedAt = performance.now();

for (const bench of STANDARD) {
  if (only && !only.includes(bench.name)) continue;
  console.log(`\n=== ${bench.name} (load average ${loadAverage()})`);
  const { result, code } = await runBenchScript(bench.name, bench.args);
  results[bench.name] = result ?? { bench: bench.name, error: `exited with ${code}` };
}

const read = results as Results;
const relay = read['relay-overhead'];
const level = (concurrency: number) => relay?.levels?.find((entry) => entry.concurrency === concurrency);
const at100 = level(100);
const coalescing = read.coalescing?.rates ?? [];
const byRate = (rate: number) => coalescing.find((entry) => entry.tokens_per_second === rate);
const ttft = relay?.ttft_overhead_ms;
const pipelined = read['jetstream-publish']?.modes?.[1];
const liveDelivery = (mode: string) =>
  read['jetstream-publish']?.modes?.find((entry) => entry.mode.endsWith(mode))?.nats_cpu_ms_per_1k;
const capacity = read.capacity;
const scaling = read['writer-scaling'];
const idle = read['idle-sse'];
const gatewayScaling = read['gateway-scaling'];
const memory = read.memory;
const workerIdleMb = memory?.services
  .filter((entry) => /^(writer|reviewer)-/.test(entry.instance))
  .reduce((most, entry) => Math.max(most, entry.idle_mb), 0);

const dedupe = (variant: string) =>
  read['broker-dedupe']?.variants.find((entry) => entry.variant === variant);
const capacityAt = (runs: number) => capacity?.levels?.find((entry) => entry.level === runs);
const attempts = read['capacity-attempts'];
const attemptsAt = (runs: number) => attempts?.levels.find((entry) => entry.level === runs);
// Of every attempt made: one that stopped below the level, or printed nothing, did not hold it.
const attemptsLine = (entry: ReturnType<typeof attemptsAt>) =>
  entry && attempts ? `${entry.held} of ${attempts.attempts}` : '-';
const peerAt = (system: string) =>
  read.peer?.levels?.find((entry) => entry.system === system && entry.concurrency === 100);
const peerLine = (entry: ReturnType<typeof peerAt>) =>
  entry
    ? `${fmt(entry.launch_ms.p50)} / ${fmt(entry.token_delay_ms.p99)} / ${fmt(entry.cpu_ms_per_1k_tokens_with_client, 0)}`
    : '-';
const fmt = (value: unknown, digits = 1) =>
  typeof value === 'number' && Number.isFinite(value) ? value.toFixed(digits) : '-';
const verdict = (ok: boolean | undefined) => (ok === undefined ? '-' : ok ? 'met' : 'NOT met');

const figures = [
  {
    figure: '1 relay added delay p50 / p99 at 100 runs (ms)',
    value: `${fmt(at100?.added_ms?.p50)} / ${fmt(at100?.added_ms?.p99)}`,
    baseline: `direct ${fmt(at100?.direct_delay_ms?.p50)} / ${fmt(at100?.direct_delay_ms?.p99)}; 1 run +${fmt(level(1)?.added_ms?.p50)} / +${fmt(level(1)?.added_ms?.p99)}; 200 runs +${fmt(level(200)?.added_ms?.p50)} / +${fmt(level(200)?.added_ms?.p99)}`,
    target: '≤ 2 / ≤ 15',
    met: at100 ? at100.added_ms.p50 <= 2 && at100.added_ms.p99 <= 15 : undefined,
  },
  {
    figure: '1t per-token added delay p50 / p99 at 100 runs (ms)',
    value: `${fmt(at100?.token_added_ms?.p50)} / ${fmt(at100?.token_added_ms?.p99)}`,
    baseline: `held for coalescing p50 / p99 ${fmt(at100?.held_ms?.p50)} / ${fmt(at100?.held_ms?.p99)}; 200 runs +${fmt(level(200)?.token_added_ms?.p50)} / +${fmt(level(200)?.token_added_ms?.p99)}`,
    target: '≤ 2 / ≤ 30',
    met: at100?.token_added_ms ? at100.token_added_ms.p50 <= 2 && at100.token_added_ms.p99 <= 30 : undefined,
  },
  {
    figure: '1t per-token delay p99 at 500 runs (ms, capacity.ts)',
    value: fmt(capacityAt(500)?.token_p99_ms),
    baseline: `p50 ${fmt(capacityAt(500)?.token_p50_ms)}; frame p99 ${fmt(capacityAt(500)?.frame_p99_ms)}`,
    target: '≤ 100',
    met: capacityAt(500) ? capacityAt(500)!.token_p99_ms <= 100 : undefined,
  },
  {
    figure: `2 TTFT overhead p50, ${ttft?.runs ?? '-'} sequential runs after ${ttft?.warmup_runs ?? '-'} (ms)`,
    value: fmt(ttft?.p50),
    baseline: `direct ${fmt(level(1)?.ttft_overhead_ms?.direct_p50)}; first launches after start-up ${fmt(ttft?.cold_p50)}; to model ${fmt(ttft?.to_model_p50)} + first frame ${fmt(ttft?.first_token_relay_p50)}; p95 ${fmt(ttft?.p95)}; traced to model ${fmt(read['launch-path']?.to_model_p50_ms)} (launch-path)`,
    target: '≤ 10',
    met: ttft ? ttft.p50 <= 10 : undefined,
  },
  {
    figure: '3 capacity at 20 tokens/s (runs)',
    value: String(capacity?.capacity ?? '-'),
    baseline: capacity?.stopped_by ?? '-',
    target: '≥ 500',
    met: capacity ? capacity.capacity >= 500 : undefined,
  },
  {
    figure: '3n capacity: attempts that held 400 / 500 runs (capacity-attempts.ts)',
    value: attemptsAt(500) ? `${attemptsLine(attemptsAt(400))} / ${attemptsLine(attemptsAt(500))}` : '-',
    baseline: `frame p99 at 500 (ms): ${
      attemptsAt(500)
        ?.frame_p99_ms.map((ms) => fmt(ms, 0))
        .join(', ') || '-'
    }`,
    target: `500 in all ${attempts?.attempts ?? '-'}`,
    met: attempts ? attempts.attempts > 0 && attemptsAt(500)?.held === attempts.attempts : undefined,
  },
  {
    figure: '4 writer scaling 1 → 4 (runs/min)',
    value: `${fmt(scaling?.speedup_1_to_max, 2)}×`,
    baseline: (scaling?.configurations ?? [])
      .map((entry) => `${entry.writers}w ${fmt(entry.runs_per_minute, 0)}/min`)
      .join(', '),
    target: '≥ 3.6×',
    met: scaling ? scaling.speedup_1_to_max >= 3.6 : undefined,
  },
  {
    figure: '5 idle SSE memory (KB per stream)',
    value: fmt(idle?.kb_per_stream),
    baseline: `${idle?.streams ?? '-'} streams; nats-server ${fmt(idle?.nats_server_kb_per_stream)} KB/stream, ${idle?.event_consumers_open ?? '-'} consumers`,
    target: '≤ 30',
    met: idle ? idle.kb_per_stream <= 30 : undefined,
  },
  {
    figure: '6 JetStream messages per 1k tokens',
    value: `${fmt(at100?.messages_per_1k_tokens, 0)} at 20 tok/s`,
    baseline: `frames/1k: 20 tok/s ${fmt(byRate(20)?.frames_per_1k_tokens, 0)}, 33 ${fmt(byRate(33)?.frames_per_1k_tokens, 0)}, 50 ${fmt(byRate(50)?.frames_per_1k_tokens, 0)}, 100 ${fmt(byRate(100)?.frames_per_1k_tokens, 0)}; frame delay p50 at 50 tok/s ${fmt(byRate(50)?.frame_delay_ms?.p50)} ms`,
    target: 'low, figure 1 intact',
    met: undefined,
  },
  {
    figure: '10 thinking frames per 1k reasoning tokens',
    value: (read['reasoning-frames']?.rates ?? [])
      .map(
        (entry) => `${fmt(entry.thinking_frames_per_1k_reasoning_tokens, 0)} at ${entry.tokens_per_second}`,
      )
      .join(', '),
    baseline: 'tokens/s: 1,000 would be one frame per token',
    target: 'coalesced like text',
    met: undefined,
  },
  {
    figure: '11 peer at 100 runs: launch p50 (ms) / token p99 (ms) / CPU per 1k tok',
    value: peerAt('quill') ? `Quill ${peerLine(peerAt('quill'))}` : '-',
    baseline: `Agents SDK + Fastify ${peerLine(peerAt('peer'))}; direct openai SDK ${peerLine(peerAt('direct'))} (peer.ts: the peer skips auth, billing, durable log, resume, review)`,
    target: '-',
    met: undefined,
  },
  {
    figure: '7 CPU per 1k relayed tokens, all services (ms)',
    value: `${fmt(level(200)?.steady_cpu_ms_per_1k_tokens, 0)} streaming / ${fmt(level(200)?.cpu_ms_per_1k_tokens, 0)} with run set-up`,
    baseline: `at 200 runs; nats-server ${fmt(level(200)?.steady_cpu_ms_per_1k_tokens_by_process?.['nats-server'], 0)} more; JetStream alone: ${fmt(pipelined?.per_second, 0)} msg/s pipelined, server CPU/1k delivered ${fmt(liveDelivery('per-run consumers'), 0)} per-run consumers vs ${fmt(liveDelivery('one wildcard consumer'), 0)} one tap`,
    target: '-',
    met: undefined,
  },
  {
    figure: "7m the writer's model client alone, CPU per streamed token (µs)",
    value: fmt(read['model-stream']?.best_cpu_us_per_token),
    baseline: `${read['model-stream']?.runs ?? '-'} calls at ${read['model-stream']?.rate ?? '-'} tokens/s (model-stream.ts)`,
    target: '-',
    met: undefined,
  },
  {
    figure: "7f the writer's frame path alone, CPU per frame: writer / nats-server (µs)",
    value: `${fmt(read['frame-publish']?.best_client_us_per_frame)} / ${fmt(
      read['frame-publish'] &&
        Math.min(...read['frame-publish'].rounds.map((round) => round.nats_us_per_frame)),
    )}`,
    baseline: `${read['frame-publish']?.runs ?? '-'} runs at ${read['frame-publish']?.rate ?? '-'} deltas/s, best rounds (frame-publish.ts)`,
    target: '-',
    met: undefined,
  },
  {
    figure: '7b nats-server per frame: CPU (µs) / memory for its duplicate id (B)',
    value: `${fmt(dedupe('shipped')?.nats_cpu_us_per_frame)} / ${fmt(dedupe('shipped')?.id_bytes_per_frame ?? undefined, 0)}`,
    baseline: `without ids ${fmt(dedupe('no msg id')?.nats_cpu_us_per_frame)} µs; server RSS per frame ${fmt(dedupe('shipped')?.rss_bytes_per_frame, 0)} B with ids, ${fmt(dedupe('no msg id')?.rss_bytes_per_frame, 0)} without; ids held at a full 20-min window at ${read['broker-dedupe']?.rate ?? '-'} frames/s: ${fmt(dedupe('shipped')?.ids_at_full_window_mb ?? undefined, 0)} MB (broker-dedupe.ts)`,
    target: '-',
    met: undefined,
  },
  {
    figure: "7r reading a run's stored frames back, per frame: reader / nats-server CPU (µs)",
    value: `${fmt(read['stored-read']?.rows[0]?.reader)} / ${fmt(read['stored-read']?.rows[0]?.nats)}`,
    baseline: `${read['stored-read']?.runs ?? '-'} runs of ${read['stored-read']?.frames ?? '-'} text frames read one at a time, median round; billing and the router each read every frame of a run once it ends (stored-read.ts)`,
    target: '-',
    met: undefined,
  },
  {
    figure: `8 one gateway's cost at ${gatewayScaling?.gateways ?? '-'} gateways vs one carrying all (CPU / bytes)`,
    value: `${fmt(gatewayScaling?.cpu_vs_one_gateway ?? undefined, 2)} / ${fmt(gatewayScaling?.egress_vs_one_gateway ?? undefined, 2)}`,
    baseline: `with the tap (every gateway reads every run): CPU ${fmt(gatewayScaling?.tap_cpu_vs_one_gateway ?? undefined, 2)}`,
    target: '≤ 0.3',
    met: gatewayScaling?.cpu_vs_one_gateway == null ? undefined : gatewayScaling.cpu_vs_one_gateway <= 0.3,
  },
  {
    figure: '9 worker RSS idle (MB)',
    value: fmt(workerIdleMb, 0),
    baseline: `${(memory?.services ?? []).map((entry) => `${entry.instance.replace(/-\d+$/, '')} ${fmt(entry.idle_mb, 0)}→${fmt(entry.peak_mb, 0)}`).join(', ')} at ${memory?.runs ?? '-'} runs; one more writer ready in ${fmt(memory?.extra_writer.ready_ms, 0)} ms`,
    target: '≤ 120',
    met: workerIdleMb === undefined ? undefined : workerIdleMb <= 120,
  },
];

console.log(
  `\n=== summary (${((performance.now() - startedAt) / 60_000).toFixed(1)} min, load average now ${loadAverage()})`,
);
console.log(
  table([
    ['figure', 'value', 'target', '', 'baseline / context'],
    ...figures.map((entry) => [entry.figure, entry.value, entry.target, verdict(entry.met), entry.baseline]),
  ]),
);
console.log(
  JSON.stringify(
    rounded({
      bench: 'run-all',
      minutes: (performance.now() - startedAt) / 60_000,
      figures: figures.map(({ figure, value, target, met }) => ({ figure, value, target, met: met ?? null })),
      results,
    }),
  ),
);
