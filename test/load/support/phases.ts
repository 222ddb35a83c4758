import { type BenchStack, serviceCpuMs } from './bench-stack.ts';
import { cpuBetween, cpuMeter, startCpuSampler } from './proc.ts';
import {
  type DirectTrace,
  failed,
  matchDelays,
  type RunDelays,
  type RunTrace,
  streamDirect,
  streamRun,
  writerRequest,
} from './runs.ts';
import { sleep } from './stats.ts';

/** Runs `count` tasks, `concurrency` at a time, the first wave spread over `spreadMs`. */
export async function inWaves<T>(
  count: number,
  concurrency: number,
  spreadMs: number,
  task: (index: number) => Promise<T>,
): Promise<T[]> {
  const results: T[] = new Array(count);
  let next = 0;
  const lane = async (laneIndex: number) => {
    await sleep((spreadMs * laneIndex) / Math.max(1, concurrency));
    while (next < count) {
      const index = next++;
      results[index] = await task(index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(count, concurrency) }, (_, index) => lane(index)));
  return results;
}

export interface QuillPhase {
  traces: RunTrace[];
  delays: RunDelays[];
  failures: string[];
  /** Tokens the fake LLM streamed in the phase's runs. */
  tokens: number;
  /** JetStream messages the phase published, by stream. */
  published: Record<'runs' | 'tasks' | 'events', number>;
  /** CPU ms per service process during the phase. */
  cpu: Record<string, number>;
  wallMs: number;
  /**
   * While every run of the phase was streaming at once (from a second after the last run's first
   * text frame to the first run's last): the frames received then, and the CPU spent then by
   * every process.
   * Undefined when the runs did not overlap.
   */
  steady?: SteadyWindow;
}

const SETTLE_MS = 1000;

export interface SteadyWindow {
  /** From the last run's first text frame to the first run's last. */
  spanMs: number;
  frameDelays: number[];
  /** Per token of those frames: its delay (coalescing included) and how long it was held for newer ones. */
  tokenDelays: number[];
  heldDelays: number[];
  /** Tokens relayed within the span. */
  tokens: number;
  /** The part of the span the CPU readings cover (they are taken every 250 ms). */
  cpuMs: number;
  /** CPU ms per process (service instances, fake-llm, nats-server, bench-client). */
  cpu: Record<string, number>;
}

/** `concurrency` runs at once (`runs` in all) through Quill, matched against the fake's stamps. */
export async function quillPhase(
  bench: BenchStack,
  options: { runs: number; concurrency: number; spreadMs: number },
): Promise<QuillPhase> {
  const before = await bench.publishedCounts();
  const stopCpu = cpuMeter(bench.pids());
  const sampler = startCpuSampler({ ...bench.pids(), ...bench.otherPids() });
  const startedAt = performance.now();
  const traces = await inWaves(options.runs, options.concurrency, options.spreadMs, (index) =>
    streamRun(bench.gateway, bench.author(index), `bench ${index}`),
  );
  const wallMs = performance.now() - startedAt;
  const cpu = stopCpu();
  const samples = sampler.stop();
  const after = await bench.publishedCounts();
  const requests = await inWaves(traces.length, 16, 0, (index) => writerRequest(bench, traces[index]!.runId));
  const delays: RunDelays[] = [];
  traces.forEach((trace, index) => {
    const matched = matchDelays(trace, requests[index]);
    if (matched) delays.push(matched);
  });
  const streaming = traces.filter((trace) => trace.text.length > 0);
  // A second after the last run's first frame: the launches (and the garbage they leave) are over.
  const from = Math.max(...streaming.map((trace) => trace.text[0]!.receivedAt)) + SETTLE_MS;
  const to = Math.min(...streaming.map((trace) => trace.text.at(-1)!.receivedAt));
  let steady: SteadyWindow | undefined;
  const window = cpuBetween(samples, from, to);
  if (streaming.length === traces.length && window.ms > 0) {
    const frameDelays: number[] = [];
    const tokenDelays: number[] = [];
    const heldDelays: number[] = [];
    let tokens = 0;
    for (const run of delays) {
      let first = 0;
      run.frameAt.forEach((at, index) => {
        const count = run.frameTokens[index]!;
        first += count;
        if (at < from || at > to) return;
        frameDelays.push(run.frame[index]!);
        tokenDelays.push(...run.token.slice(first - count, first));
        heldDelays.push(...run.held.slice(first - count, first));
        tokens += count;
      });
    }
    steady = {
      spanMs: to - from,
      frameDelays,
      tokenDelays,
      heldDelays,
      tokens,
      cpuMs: window.ms,
      cpu: window.cpu,
    };
  }
  return {
    steady,
    traces,
    delays,
    failures: traces.filter(failed).map((trace) => trace.failure!),
    tokens: delays.reduce((total, run) => total + run.tokens, 0),
    published: {
      runs: after.runs - before.runs,
      tasks: after.tasks - before.tasks,
      events: after.events - before.events,
    },
    cpu,
    wallMs,
  };
}

export async function directPhase(
  bench: BenchStack,
  options: { runs: number; concurrency: number; spreadMs: number; ttftMs: number; tokensPerSecond: number },
): Promise<DirectTrace[]> {
  return inWaves(options.runs, options.concurrency, options.spreadMs, () =>
    streamDirect(bench.fake.url, { ttftMs: options.ttftMs, tokensPerSecond: options.tokensPerSecond }),
  );
}

/** Total published JetStream messages of a phase. */
export function publishedTotal(phase: QuillPhase): number {
  return phase.published.runs + phase.published.tasks + phase.published.events;
}

export function cpuPerThousandTokens(phase: QuillPhase): number {
  return phase.tokens === 0 ? Number.NaN : (serviceCpuMs(phase.cpu) * 1000) / phase.tokens;
}

/** CPU ms per 1,000 tokens of named processes while every run streamed (relay cost alone). */
export function steadyCpuPerThousandTokens(steady: SteadyWindow, names: readonly string[]): number {
  const cpuMs = names.reduce((total, name) => total + (steady.cpu[name] ?? 0), 0);
  const tokensInCpuWindow = (steady.tokens * steady.cpuMs) / steady.spanMs;
  return tokensInCpuWindow === 0 ? Number.NaN : (cpuMs * 1000) / tokensInCpuWindow;
}

/** CPU ms per service kind (gateway, router, …) from per-instance figures (`writer-3` → writer). */
export function cpuByService(cpu: Record<string, number>): Record<string, number> {
  const byService: Record<string, number> = {};
  for (const [instance, value] of Object.entries(cpu)) {
    const service = instance.replace(/-\d+$/, '');
    byService[service] = (byService[service] ?? 0) + value;
  }
  return byService;
}
