/**
 * Quill next to a peer and a direct client, on the same fake LLM in the same run.
 *
 * - Quill: the whole stack (gateway → router → context → writer → JetStream → gateway → SSE).
 * - Peer: the OpenAI Agents SDK (`@openai/agents`, a chat-completions model pointed at the fake)
 *   behind one minimal Fastify SSE route, one process (support/peer-server.ts). The peer SKIPS what
 *   Quill does on every run: API-key auth, rate limits, billing reservation and settlement, the
 *   durable frame log (JetStream) and resume from `Last-Event-ID` on any gateway replica, the
 *   router's phase, context compile, the file capture and the review loop. Its figures are
 *   what "a model call behind an HTTP route" costs; Quill's difference is the price of those.
 * - Direct: the `openai` SDK straight to the fake (support/direct-client.ts, its own process):
 *   no server at all.
 *
 * Per system and concurrency (1 = `--single` runs one after another): launch overhead (request
 * sent → the fake received the model request), per-token delay (arrival minus the fake's emit
 * stamp, every token), and CPU per 1,000 tokens summed over the processes involved (from /proc:
 * Quill's services and nats-server, the peer's process, the direct client's; the fake LLM and
 * the reading client are shown apart, they are the same for all three). Postgres and Redis (used
 * by Quill only) are shared with the machine and not counted. Prints a table with ratios and one
 * JSON line. Quill and the peer each serve `--warmup` short runs first, one after another (a
 * process's first launches cost twice as much, support/warmup.ts); the direct client is a new
 * process per phase.
 *
 *   node test/load/peer.ts [--levels 1,50,100] [--tokens 200] [--rate 20] [--single 5] [--warmup 200]
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { parseArgs } from 'node:util';
import { REPO_ROOT } from '../support/service-process.ts';
import { startBenchStack } from './support/bench-stack.ts';
import { inWaves, quillPhase } from './support/phases.ts';
import { cpuMeter, loadAverage } from './support/proc.ts';
import { matchDelays, plainReply, type RunTrace } from './support/runs.ts';
import { preciseNow, readSse } from './support/sse-reader.ts';
import { distribution, rounded, table } from './support/stats.ts';
import { WARMUP_LAUNCHES } from './support/warmup.ts';

const { values } = parseArgs({
  options: {
    levels: { type: 'string', default: '1,50,100' },
    tokens: { type: 'string', default: '200' },
    rate: { type: 'string', default: '20' },
    ttft: { type: 'string', default: '100' },
    single: { type: 'string', default: '5' },
    warmup: { type: 'string', default: String(WARMUP_LAUNCHES) },
  },
});
const levels = values.levels.split(',').map(Number);
const tokens = Number(values.tokens);
const reply = {
  text: plainReply(tokens),
  tokens_per_second: Number(values.rate),
  ttft_ms: Number(values.ttft),
};
const runsAt = (level: number) => (level === 1 ? Number(values.single) : level);
type System = 'quill' | 'peer' | 'direct';

/** What one system did at one level. */
interface Phase {
  launch: number[];
  token: number[];
  tokens: number;
  /** CPU ms of the system's own processes, and of the fake LLM and the reading client. */
  systemCpu: number;
  fakeCpu: number;
  clientCpu: number;
  failures: number;
}

const bench = await startBenchStack();
let peer: ChildProcess | undefined;
const figures: Array<Record<string, unknown>> = [];
try {
  const total = levels.reduce((sum, level) => sum + runsAt(level), 0) + 5;
  for (const role of ['writer', 'peer', 'direct_sdk']) {
    await bench.fake.addScript({ match: { role }, responses: Array.from({ length: total }, () => reply) });
  }
  const started = await startPeer(bench.fake.url);
  peer = started.child;
  // Warm-up of each (JIT, pools), the same number of short runs apiece: added last, so the fake
  // (newest script first) serves them before the measured replies.
  const warmup = Number(values.warmup);
  const short = { text: plainReply(5), tokens_per_second: 100, ttft_ms: reply.ttft_ms };
  for (const role of ['writer', 'peer']) {
    await bench.fake.addScript({ match: { role }, responses: Array.from({ length: warmup }, () => short) });
  }
  await quillPhase(bench, { runs: warmup, concurrency: 1, spreadMs: 0 });
  await peerPhase(started.url, warmup, 1, 0, 'warm');
  await directPhase(1, 1, 0, 'warm');

  for (const level of levels) {
    const runs = runsAt(level);
    const concurrency = level === 1 ? 1 : level;
    const spreadMs = Math.min(4000, level * 20);
    for (const system of ['direct', 'peer', 'quill'] as System[]) {
      const load = loadAverage();
      const others = cpuMeter(bench.otherPids());
      const own = cpuMeter(
        system === 'quill' ? { ...bench.pids(), nats: bench.otherPids()['nats-server'] } : { peer: peer.pid },
      );
      let phase: Omit<Phase, 'systemCpu' | 'fakeCpu' | 'clientCpu'> & { childCpu?: number };
      if (system === 'quill') {
        const quill = await quillPhase(bench, { runs, concurrency, spreadMs });
        phase = {
          launch: quill.delays.map((run) => run.toModel),
          token: quill.delays.flatMap((run) => run.token),
          tokens: quill.tokens,
          failures: quill.failures.length,
        };
      } else if (system === 'peer') {
        phase = await peerPhase(started.url, runs, concurrency, spreadMs, `l${level}`);
      } else {
        phase = await directPhase(runs, concurrency, spreadMs, `l${level}`);
      }
      const ownCpu = Object.values(own()).reduce((sum, value) => sum + value, 0);
      const other = others();
      const result: Phase = {
        ...phase,
        systemCpu: system === 'direct' ? (phase.childCpu ?? 0) : ownCpu,
        fakeCpu: other['fake-llm'] ?? 0,
        clientCpu: system === 'direct' ? 0 : (other['bench-client'] ?? 0),
      };
      figures.push(summarize(system, level, runs, result, load));
      // Progress on stderr: a phase that never ends (a stuck run) leaves what was measured.
      console.error(JSON.stringify(rounded(figures.at(-1))));
    }
  }
} finally {
  peer?.kill('SIGTERM');
  await bench.stop();
}

function summarize(system: System, level: number, runs: number, phase: Phase, load: number) {
  const perThousand = (ms: number) => (phase.tokens === 0 ? Number.NaN : (ms * 1000) / phase.tokens);
  return {
    system,
    concurrency: level,
    runs,
    launch_ms: distribution(phase.launch),
    token_delay_ms: distribution(phase.token),
    cpu_ms_per_1k_tokens: perThousand(phase.systemCpu),
    // The system plus the client that reads it (for the direct client they are one process).
    cpu_ms_per_1k_tokens_with_client: perThousand(phase.systemCpu + phase.clientCpu),
    fake_llm_cpu_ms_per_1k_tokens: perThousand(phase.fakeCpu),
    tokens: phase.tokens,
    failures: phase.failures,
    load_average: load,
  };
}

async function peerPhase(url: string, runs: number, concurrency: number, spreadMs: number, tag: string) {
  const traces = await inWaves(runs, concurrency, spreadMs, async (index) => {
    const id = `${tag}-${index}-${Date.now().toString(36)}`;
    const trace = {
      runId: id,
      postedAt: preciseNow(),
      text: [] as RunTrace['text'],
      failure: undefined as string | undefined,
    };
    let length = 0;
    try {
      const response = await readSse({
        url: `${url}/stream`,
        body: { id, message: 'Continue the story.' },
        onEvent(event) {
          if (event.data === '[DONE]') return true;
          const value = JSON.parse(event.data) as { text?: string; error?: string };
          if (value.error) trace.failure = value.error;
          if (!value.text) return false;
          length += value.text.length;
          trace.text.push({ end: length, receivedAt: event.receivedAt });
          return false;
        },
      });
      if (response.status !== 200) trace.failure = `http ${response.status}`;
    } catch (error) {
      trace.failure = (error as Error).message;
    }
    return trace;
  });
  const matched = await inWaves(traces.length, 16, 0, async (index) => {
    const trace = traces[index]!;
    const [request] = await bench.fake.requests({ run_id: trace.runId, role: 'peer' });
    return matchDelays(trace as unknown as RunTrace, request);
  });
  const delays = matched.flatMap((run) => (run ? [run] : []));
  return {
    launch: delays.map((run) => run.toModel),
    token: delays.flatMap((run) => run.token),
    tokens: delays.reduce((sum, run) => sum + run.tokens, 0),
    failures: traces.filter((trace) => trace.failure).length + (traces.length - delays.length),
  };
}

async function directPhase(runs: number, concurrency: number, spreadMs: number, tag: string) {
  const unique = `${tag}-${Date.now().toString(36)}`;
  const args = ['--model-url', bench.fake.url, '--runs', String(runs), '--concurrency', String(concurrency)];
  const child = spawn(
    process.execPath,
    ['test/load/support/direct-client.ts', ...args, '--spread-ms', String(spreadMs), '--tag', unique],
    { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  await new Promise((resolve) => child.on('exit', resolve));
  const { streams, cpu_ms: childCpu } = JSON.parse(output.trim().split('\n').at(-1) || '{"streams":[]}') as {
    streams: Array<{ id: string; postedAt: number; token: number[]; failure?: string }>;
    cpu_ms: number;
  };
  const launch = await inWaves(streams.length, 16, 0, async (index) => {
    const [request] = await bench.fake.requests({ run_id: streams[index]!.id, role: 'direct_sdk' });
    return request?.stream ? request.stream.started_at - streams[index]!.postedAt : Number.NaN;
  });
  return {
    launch: launch.filter(Number.isFinite),
    token: streams.flatMap((stream) => stream.token),
    tokens: streams.reduce((sum, stream) => sum + stream.token.length, 0),
    failures: streams.filter((stream) => stream.failure).length,
    childCpu,
  };
}

async function startPeer(modelUrl: string): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, ['test/load/support/peer-server.ts', '--model-url', modelUrl], {
    cwd: REPO_ROOT,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const url = await new Promise<string>((resolve, reject) => {
    let output = '';
    child.once('exit', (code) => reject(new Error(`peer exited with ${code}: ${output}`)));
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const match = /listening on (\S+)/.exec(output);
      if (match) resolve(match[1]!);
    });
  });
  return { child, url };
}

type Figure = ReturnType<typeof summarize>;
const find = (system: System, level: number) =>
  figures.find((f) => f.system === system && f.concurrency === level) as Figure | undefined;
const ratio = (a: number | undefined, b: number | undefined) =>
  a !== undefined && b !== undefined && b > 0 ? `${(a / b).toFixed(1)}×` : '-';
console.log(
  `peer: ${tokens} tokens per run at ${values.rate} tokens/s, model TTFT ${values.ttft} ms; the peer skips auth, billing, the durable log, resume on any replica, routing, context and review`,
);
console.log(
  table([
    [
      'runs',
      'system',
      'launch p50',
      'token p50/p99',
      'CPU ms/1k tok (own / +client)',
      'fake LLM',
      'failed',
      'load',
    ],
    ...(figures as Figure[]).map((f) => [
      f.concurrency,
      f.system,
      f.launch_ms.p50,
      `${f.token_delay_ms.p50.toFixed(1)} / ${f.token_delay_ms.p99.toFixed(1)}`,
      `${f.cpu_ms_per_1k_tokens.toFixed(0)} / ${f.cpu_ms_per_1k_tokens_with_client.toFixed(0)}`,
      f.fake_llm_cpu_ms_per_1k_tokens,
      f.failures,
      f.load_average,
    ]),
  ]),
);
const ratios = levels.map((level) => {
  const [quill, peerFigure, direct] = (['quill', 'peer', 'direct'] as System[]).map((system) =>
    find(system, level),
  );
  return {
    concurrency: level,
    launch_quill_over_peer: ratio(quill?.launch_ms.p50, peerFigure?.launch_ms.p50),
    token_p99_quill_over_peer: ratio(quill?.token_delay_ms.p99, peerFigure?.token_delay_ms.p99),
    cpu_quill_over_peer: ratio(
      quill?.cpu_ms_per_1k_tokens_with_client,
      peerFigure?.cpu_ms_per_1k_tokens_with_client,
    ),
    cpu_peer_over_direct: ratio(
      peerFigure?.cpu_ms_per_1k_tokens_with_client,
      direct?.cpu_ms_per_1k_tokens_with_client,
    ),
  };
});
console.log(
  table([
    ['runs', 'launch Quill/peer', 'token p99 Quill/peer', 'CPU+client Quill/peer', 'CPU+client peer/direct'],
    ...ratios.map((r) => [
      r.concurrency,
      r.launch_quill_over_peer,
      r.token_p99_quill_over_peer,
      r.cpu_quill_over_peer,
      r.cpu_peer_over_direct,
    ]),
  ]),
);
console.log(JSON.stringify(rounded({ bench: 'peer', tokens, levels: figures, ratios })));
