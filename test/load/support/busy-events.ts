import { randomUUID } from 'node:crypto';
import { type Bus, connectBus, ensureStreams, publishEnvelope, publishFrame } from '@quill/bus';
import { loadConfig } from '@quill/config';
import { frame, StepRecordEnvelope, UsageEnvelope } from '@quill/contracts';
import { type PrivateNats, startPrivateNats } from './private-nats.ts';
import { cpuMs } from './proc.ts';
import { distribution, rounded, sleep } from './stats.ts';

/**
 * An EVENTS stream as a busy day leaves it, for the benchmarks of reads of one run in it
 * (record-read.ts, run-start-reads.ts): other runs' frames, then runs stored as runs store them.
 */

/** The command-line options both benchmarks take (`parseArgs` options). */
export const BUSY_STREAM_OPTIONS = {
  frames: { type: 'string', default: '2000000' },
  'runs-before': { type: 'string', default: '5000' },
  runs: { type: 'string', default: '21' },
  rounds: { type: 'string', default: '2' },
  'cold-ms': { type: 'string', default: '30000' },
} as const;

/** Those options' values, read. */
export function busyStreamSettings(values: Record<keyof typeof BUSY_STREAM_OPTIONS, string>) {
  return {
    frames: Number(values.frames),
    /** The other runs the stream's older frames belong to. */
    runIds: Array.from({ length: Number(values['runs-before']) }, () => randomUUID()),
    runs: Number(values.runs),
    rounds: Number(values.rounds),
    coldMs: Number(values['cold-ms']),
  };
}

/** A nats-server of the benchmark's own, with EVENTS (and the other streams) as the services make them. */
export async function openBusyStream(
  namespace: string,
  name: string,
): Promise<{ nats: PrivateNats; bus: Bus }> {
  const nats = await startPrivateNats();
  try {
    const bus = await connectBus({ url: nats.url, namespace, name });
    await ensureStreams(bus, loadConfig({ env: {}, dotenv: {} }).derived.streams);
    return { nats, bus };
  } catch (error) {
    await nats.stop();
    throw error;
  }
}

export interface TargetRun {
  runId: string;
  launchedAt: string;
  /** Where its `run_started` is stored (what the router finds when it takes the run). */
  startedSeq: number;
  /** Where the run's first step record (`dispatched`) is stored. */
  dispatchedSeq: number;
}

/** Other runs' text frames, as workers store them (quiet publishes in batches), one run after another in turn. */
export async function prefillFrames(target: Bus, count: number, runIds: readonly string[]): Promise<void> {
  const batch = 2000;
  for (let index = 0; index < count; index += batch) {
    const sends: Array<Promise<unknown>> = [];
    for (let offset = index; offset < Math.min(count, index + batch); offset++) {
      const runId = runIds[offset % runIds.length]!;
      sends.push(
        publishFrame(target, frame('text', runId, { agent: 'writer', content: `第${offset}段。` }), {
          quiet: true,
        }),
      );
    }
    await Promise.all(sends);
  }
}

/** One run's record, as the launch, the router, the writer and the finisher store it. */
export async function storeRun(target: Bus): Promise<TargetRun> {
  const runId = randomUUID();
  const launchedAt = new Date().toISOString();
  const started = frame('run_started', runId, {
    session_id: randomUUID(),
    project_id: randomUUID(),
    generation_mode: 'fast',
  });
  const startedAck = await publishFrame(target, started);
  const step = {
    v: 1 as const,
    kind: 'dispatched' as const,
    run_id: runId,
    step: 1,
    role: 'writer' as const,
  };
  const dispatched = await publishEnvelope(target, target.names.steps(runId), StepRecordEnvelope, step, {});
  await publishEnvelope(target, target.names.steps(runId), StepRecordEnvelope, { ...step, step: 2 }, {});
  for (let index = 0; index < 20; index++)
    await publishFrame(target, frame('text', runId, { agent: 'writer', content: `片段${index}` }), {
      quiet: true,
    });
  await publishEnvelope(
    target,
    target.names.usage(runId),
    UsageEnvelope,
    {
      v: 1,
      run_id: runId,
      user_id: randomUUID(),
      call_index: 1000,
      attempt: 0,
      role: 'writer',
      provider: 'fake',
      model: 'fake-1',
      usage: { prompt_tokens: 100, completion_tokens: 20, total_tokens: 120, usage_source: 'provider' },
    },
    {},
  );
  await publishFrame(target, frame('workflow_complete', runId, {}));
  await publishFrame(target, frame('done', runId, {}));
  return { runId, launchedAt, startedSeq: startedAck.seq, dispatchedSeq: dispatched.seq };
}

/** A read's figures over the rounds: the cold read's wall time and server CPU, the warm reads' median and CPU per read. */
export interface ReadFigures {
  cold: number[];
  coldCpu: number[];
  warm: number[];
  warmCpu: number[];
}

/**
 * One round of one read: a quiet `coldMs` (the server lets its block caches and per-subject
 * indexes go), the first run's read (cold), then every other run's (warm), each figure added to
 * `figures`. Returns the cold read's result, for the caller to check.
 */
export async function timeRound<T>(
  serverPid: number,
  targets: readonly TargetRun[],
  read: (run: TargetRun) => Promise<T>,
  coldMs: number,
  figures: ReadFigures,
): Promise<T> {
  await sleep(coldMs);
  const [first, ...rest] = targets;
  let cpu = cpuMs(serverPid);
  let at = performance.now();
  const result = await read(first!);
  figures.cold.push(performance.now() - at);
  figures.coldCpu.push(cpuMs(serverPid) - cpu);
  cpu = cpuMs(serverPid);
  const times: number[] = [];
  for (const run of rest) {
    at = performance.now();
    await read(run);
    times.push(performance.now() - at);
  }
  figures.warm.push(distribution(times).p50);
  figures.warmCpu.push((cpuMs(serverPid) - cpu) / rest.length);
  return result;
}

/** The figures' columns of a table row: each as its rounds, ` / `-separated. */
export function figureCells(figures: ReadFigures): string[] {
  const list = (numbers: number[]) => numbers.map((value) => rounded(value, 1)).join(' / ');
  return [list(figures.cold), list(figures.coldCpu), list(figures.warm), list(figures.warmCpu)];
}

export const FIGURE_HEADINGS = [
  'cold wall ms',
  'cold server CPU ms',
  'warm wall p50 ms',
  'warm server CPU ms/read',
];
