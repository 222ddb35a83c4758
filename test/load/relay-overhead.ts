/**
 * Figures 1, 2, 6 and 7: what Quill adds between the model and the author.
 *
 * At each concurrency level, that many writer runs stream a plain reply through gateway → router
 * → writer → JetStream → gateway → SSE (starts spread out, so the level is reached without a
 * launch storm), and the same client reads the fake LLM's stream directly at the same pacing and
 * concurrency (the baseline). The fake stamps every token with its emit time; matching the text
 * frames against the reply (content matching, see support/runs.ts) gives each frame's delay from
 * its newest token, and each token's delay (what the author sees: a token also waits in the writer
 * for the newest token of its frame, `held`). Both are reported over the direct read ("added").
 * Frame and token delays and CPU are taken while all runs stream at once. Prints a table and one
 * JSON line.
 *
 * Figure 2 comes from its own phase first: `--ttft-runs` short runs one after another (nothing else
 * running), POST to first text frame minus the fake's TTFT, after `--ttft-warmup` such runs (a
 * process's first launches cost twice as much, support/warmup.ts), whose first slice is
 * reported apart as the cold figure.
 *
 *   node test/load/relay-overhead.ts [--levels 1,50,100,200] [--tokens 200] [--rate 20] [--ttft 100]
 *                                    [--ttft-runs 20] [--ttft-warmup 200]
 */
import { parseArgs } from 'node:util';
import { envFromPairs, startBenchStack } from './support/bench-stack.ts';
import {
  cpuByService,
  cpuPerThousandTokens,
  directPhase,
  publishedTotal,
  quillPhase,
  steadyCpuPerThousandTokens,
} from './support/phases.ts';
import { loadAverage } from './support/proc.ts';
import { plainReply } from './support/runs.ts';
import { distribution, rounded, table } from './support/stats.ts';
import { WARMUP_LAUNCHES, WARMUP_SLICE } from './support/warmup.ts';

const { values } = parseArgs({
  options: {
    levels: { type: 'string', default: '1,50,100,200' },
    tokens: { type: 'string', default: '200' },
    rate: { type: 'string', default: '20' },
    ttft: { type: 'string', default: '100' },
    'ttft-runs': { type: 'string', default: '20' },
    'ttft-warmup': { type: 'string', default: String(WARMUP_LAUNCHES) },
    env: { type: 'string', multiple: true, default: [] },
  },
});
const levels = values.levels.split(',').map(Number);
const tokens = Number(values.tokens);
const tokensPerSecond = Number(values.rate);
const ttftMs = Number(values.ttft);
const ttftRuns = Number(values['ttft-runs']);
const ttftWarmup = Number(values['ttft-warmup']);
const extraEnv = envFromPairs(values.env);
/** Sequential runs at level 1 (more samples for the uncontended TTFT). */
const SINGLE_RUNS = 3;

const bench = await startBenchStack({ env: extraEnv });
const figures: Array<Record<string, unknown>> = [];
let ttftFigure: Record<string, unknown> = {};
try {
  const reply = { text: plainReply(tokens), tokens_per_second: tokensPerSecond, ttft_ms: ttftMs };
  const totalRuns = levels.reduce((total, level) => total + runsAt(level), 0) + 10;
  await bench.fake.addScript({
    match: { role: 'writer' },
    responses: Array.from({ length: totalRuns }, () => reply),
  });
  await bench.fake.addScript({
    match: { role: 'bench_direct' },
    responses: Array.from({ length: totalRuns }, () => ({ text: reply.text })),
  });
  // Short replies for the warm-up and the TTFT phase: added last, so the fake (newest script
  // first) serves them before the long ones.
  const short = { text: plainReply(5), tokens_per_second: 100, ttft_ms: ttftMs };
  await bench.fake.addScript({
    match: { role: 'writer' },
    responses: Array.from({ length: ttftRuns + ttftWarmup }, () => short),
  });
  // Warm-up: first-call costs (JIT, connection pools) are not what a busy service pays; the first
  // slice of it is what a replica pays right after start-up.
  const warming = await quillPhase(bench, { runs: ttftWarmup, concurrency: 1, spreadMs: 0 });
  const cold = warming.delays.slice(0, WARMUP_SLICE);
  const sequential = await quillPhase(bench, { runs: ttftRuns, concurrency: 1, spreadMs: 0 });
  const ttftOf = (pick: (run: (typeof sequential.delays)[number]) => number) =>
    distribution(sequential.delays.map(pick));
  ttftFigure = {
    warmup_runs: ttftWarmup,
    cold_runs: cold.length,
    cold_p50: distribution(cold.map((run) => run.ttft)).p50 - ttftMs,
    cold_to_model_p50: distribution(cold.map((run) => run.toModel)).p50,
    runs: sequential.delays.length,
    failures: sequential.failures.length,
    // POST → first text frame, minus the fake's configured TTFT.
    p50: ttftOf((run) => run.ttft).p50 - ttftMs,
    p95: ttftOf((run) => run.ttft).p95 - ttftMs,
    // POST until the model request reached the fake (gateway, router, context, writer)…
    to_model_p50: ttftOf((run) => run.toModel).p50,
    // …and the first token from the fake's stamp to its frame at the client.
    first_token_relay_p50: ttftOf((run) => run.firstTokenRelay).p50,
  };

  for (const level of levels) {
    const runs = runsAt(level);
    // At most 50 run starts a second: the figure is the relay at this level, not a launch storm.
    const spreadMs = Math.min(4000, level * 20);
    const load = loadAverage();
    const direct = await directPhase(bench, { runs, concurrency: level, spreadMs, ttftMs, tokensPerSecond });
    const quill = await quillPhase(bench, { runs, concurrency: level, spreadMs });
    const steady = quill.steady;
    const frameDelays = steady ? steady.frameDelays : quill.delays.flatMap((run) => run.frame);
    const quillFrames = distribution(frameDelays);
    const quillTokens = distribution(steady ? steady.tokenDelays : quill.delays.flatMap((run) => run.token));
    const held = distribution(steady ? steady.heldDelays : quill.delays.flatMap((run) => run.held));
    const directChunks = distribution(direct.flatMap((run) => run.chunk));
    const median = (pick: (run: (typeof quill.delays)[number]) => number) =>
      distribution(quill.delays.map(pick)).p50;
    const services = Object.keys(quill.cpu);
    figures.push({
      concurrency: level,
      runs,
      load_average: load,
      failures: quill.failures.length + direct.filter((run) => run.failure).length,
      failure_examples: [...new Set(quill.failures)].slice(0, 3),
      window: steady ? 'all runs streaming' : 'whole phase',
      frame_delay_ms: quillFrames,
      token_delay_ms: quillTokens,
      // Of a token's delay, the time it waited in the writer for the newest token of its frame.
      held_ms: held,
      direct_delay_ms: directChunks,
      added_ms: {
        p50: quillFrames.p50 - directChunks.p50,
        p95: quillFrames.p95 - directChunks.p95,
        p99: quillFrames.p99 - directChunks.p99,
      },
      // What the author sees: every token's delay (held ones included) over the direct read.
      token_added_ms: {
        p50: quillTokens.p50 - directChunks.p50,
        p95: quillTokens.p95 - directChunks.p95,
        p99: quillTokens.p99 - directChunks.p99,
      },
      ttft_overhead_ms: {
        // POST → first text frame, minus the fake's configured TTFT.
        p50: median((run) => run.ttft) - ttftMs,
        // …and minus what the fake really took (its TTFT plus its own scheduling).
        measured_p50: median((run) => run.ttft - run.modelTtft),
        to_model_p50: median((run) => run.toModel),
        first_token_relay_p50: median((run) => run.firstTokenRelay),
        direct_p50: distribution(direct.map((run) => run.ttft)).p50 - ttftMs,
      },
      frames_per_1k_tokens:
        (quill.delays.reduce((total, run) => total + run.frame.length, 0) * 1000) / quill.tokens,
      messages_per_1k_tokens: (publishedTotal(quill) * 1000) / quill.tokens,
      published: quill.published,
      // All services, whole phase: run set-up and settlement included (runs of `tokens` tokens).
      cpu_ms_per_1k_tokens: cpuPerThousandTokens(quill),
      cpu_ms_by_service: cpuByService(quill.cpu),
      // While every run streamed: the relay alone.
      steady_cpu_ms_per_1k_tokens: steady ? steadyCpuPerThousandTokens(steady, services) : Number.NaN,
      steady_cpu_ms_per_1k_tokens_by_process: steady
        ? Object.fromEntries(
            Object.keys(steady.cpu).map((name) => [
              name.replace(/-\d+$/, ''),
              steadyCpuPerThousandTokens(steady, [name]),
            ]),
          )
        : {},
      tokens: quill.tokens,
    });
  }
} finally {
  await bench.stop();
}

function runsAt(level: number): number {
  return level === 1 ? SINGLE_RUNS : level;
}

const rows = figures.map((figure) => {
  const f = figure as {
    concurrency: number;
    frame_delay_ms: { p50: number; p95: number; p99: number };
    direct_delay_ms: { p50: number; p99: number };
    added_ms: { p50: number; p99: number };
    token_added_ms: { p50: number; p99: number };
    held_ms: { p50: number; p99: number };
    ttft_overhead_ms: { p50: number; to_model_p50: number; first_token_relay_p50: number };
    messages_per_1k_tokens: number;
    cpu_ms_per_1k_tokens: number;
    steady_cpu_ms_per_1k_tokens: number;
    failures: number;
    load_average: number;
  };
  return [
    f.concurrency,
    `${f.frame_delay_ms.p50.toFixed(1)} / ${f.frame_delay_ms.p95.toFixed(1)} / ${f.frame_delay_ms.p99.toFixed(1)}`,
    `${f.direct_delay_ms.p50.toFixed(1)} / ${f.direct_delay_ms.p99.toFixed(1)}`,
    `${f.added_ms.p50.toFixed(1)} / ${f.added_ms.p99.toFixed(1)}`,
    `${f.token_added_ms.p50.toFixed(1)} / ${f.token_added_ms.p99.toFixed(1)}`,
    `${f.held_ms.p50.toFixed(1)} / ${f.held_ms.p99.toFixed(1)}`,
    `${f.ttft_overhead_ms.p50.toFixed(1)} (${f.ttft_overhead_ms.to_model_p50.toFixed(1)} + ${f.ttft_overhead_ms.first_token_relay_p50.toFixed(1)})`,
    f.messages_per_1k_tokens,
    `${f.steady_cpu_ms_per_1k_tokens.toFixed(0)} / ${f.cpu_ms_per_1k_tokens.toFixed(0)}`,
    f.failures,
    f.load_average,
  ];
});
const t = ttftFigure as {
  runs: number;
  warmup_runs: number;
  cold_runs: number;
  cold_p50: number;
  cold_to_model_p50: number;
  p50: number;
  p95: number;
  to_model_p50: number;
  first_token_relay_p50: number;
};
console.log(
  `time to first token overhead (${t.runs} sequential runs after ${t.warmup_runs}): p50 ${t.p50.toFixed(1)} ms, p95 ${t.p95.toFixed(1)} ms (to model ${t.to_model_p50.toFixed(1)} + first frame ${t.first_token_relay_p50.toFixed(1)}); the first ${t.cold_runs} after start-up p50 ${t.cold_p50.toFixed(1)} ms (to model ${t.cold_to_model_p50.toFixed(1)})`,
);
console.log(
  `relay overhead: ${tokens} tokens per run at ${tokensPerSecond} tokens/s, model TTFT ${ttftMs} ms (frame delays and the first CPU figure while all runs stream)`,
);
console.log(
  table([
    [
      'runs',
      'frame delay p50/p95/p99',
      'direct p50/p99',
      'added/frame p50/p99',
      'added/token p50/p99',
      'held p50/p99',
      'TTFT overhead p50 (to model + 1st relay)',
      'msgs/1k tok',
      'CPU ms/1k tok (relay / all)',
      'failed',
      'load',
    ],
    ...rows,
  ]),
);
console.log(
  JSON.stringify(
    rounded({
      bench: 'relay-overhead',
      tokens,
      tokens_per_second: tokensPerSecond,
      ttft_ms: ttftMs,
      ttft_overhead_ms: ttftFigure,
      levels: figures,
    }),
  ),
);
