/**
 * Figure 4: completed runs per minute with 1, 2 and 4 writer processes, each with the
 * same fixed number of task slots (WORKER_CONCURRENCY). The fake LLM answers after 500 ms and
 * streams 40 tokens/s; the client keeps more runs in flight than the writers have slots, so the
 * task queue never drains. Writers are added to the same stack between measurements. Prints a
 * table and one JSON line.
 *
 *   node test/load/writer-scaling.ts [--writers 1,2,4] [--slots 8] [--tokens 60] [--window-s 20]
 */
import { parseArgs } from 'node:util';
import { startBenchStack } from './support/bench-stack.ts';
import { cpuByService } from './support/phases.ts';
import { cpuMeter, loadAverage, machineCpuMeter } from './support/proc.ts';
import { plainReply, streamRun } from './support/runs.ts';
import { rounded, sleep, table } from './support/stats.ts';

const { values } = parseArgs({
  options: {
    writers: { type: 'string', default: '1,2,4' },
    slots: { type: 'string', default: '8' },
    tokens: { type: 'string', default: '60' },
    'window-s': { type: 'string', default: '20' },
  },
});
const writerCounts = values.writers.split(',').map(Number);
const slots = Number(values.slots);
const tokens = Number(values.tokens);
const windowMs = Number(values['window-s']) * 1000;
const TTFT_MS = 500;
const TOKENS_PER_SECOND = 40;

const bench = await startBenchStack({
  env: { WORKER_CONCURRENCY: String(slots) },
  fake: { ttftMs: TTFT_MS, tokensPerSecond: TOKENS_PER_SECOND },
});
const figures: Array<Record<string, unknown>> = [];
const completions: number[] = [];
const failures: string[] = [];
let target = 0;
let stopping = false;
let started = 0;
const lanes: Array<Promise<void>> = [];
try {
  const reply = { text: plainReply(tokens), ttft_ms: TTFT_MS, tokens_per_second: TOKENS_PER_SECOND };
  await bench.fake.addScript({
    match: { role: 'writer' },
    responses: Array.from({ length: 20_000 }, () => reply),
  });
  let writers = bench.stack.services.filter((service) => service.name === 'writer').length;
  for (const count of writerCounts) {
    while (writers < count) {
      await bench.stack.startService('writer');
      writers++;
    }
    // Half again as many runs in flight as there are slots: the queue never drains.
    target = Math.ceil(count * slots * 1.5);
    while (lanes.length < target) lanes.push(lane(lanes.length));
    await sleep(4000);
    const load = loadAverage();
    const stopCpu = cpuMeter(bench.pids());
    const stopMachine = machineCpuMeter();
    const from = performance.now();
    await sleep(windowMs);
    const done = completions.filter((at) => at >= from).length;
    const cpu = cpuByService(stopCpu());
    figures.push({
      writers: count,
      slots_per_writer: slots,
      in_flight: target,
      runs_per_minute: (done * 60_000) / windowMs,
      load_average: load,
      machine_cpu_cores: stopMachine() / windowMs,
      cpu_cores_by_service: Object.fromEntries(
        Object.entries(cpu).map(([name, ms]) => [name, ms / windowMs]),
      ),
    });
  }
} finally {
  stopping = true;
  await Promise.allSettled(lanes);
  await bench.stop();
}

/** One client lane: starts a run, waits for its `done`, starts the next; idles above the target. */
async function lane(index: number): Promise<void> {
  while (!stopping) {
    if (index >= target) {
      await sleep(200);
      continue;
    }
    const trace = await streamRun(bench.gateway, bench.author(started++), `scaling ${index}`);
    if (trace.failure) failures.push(trace.failure);
    else completions.push(performance.now());
  }
}

const base = (figures[0]?.runs_per_minute as number) ?? Number.NaN;
for (const figure of figures) figure.speedup = (figure.runs_per_minute as number) / base;
console.log(
  `writer scaling: model TTFT ${TTFT_MS} ms, ${TOKENS_PER_SECOND} tokens/s, ${tokens} tokens per run, ${slots} slots per writer`,
);
console.log(
  table([
    [
      'writers',
      'in flight',
      'runs/min',
      'speedup',
      'writer cores',
      'services cores',
      'machine cores',
      'load',
    ],
    ...figures.map((f) => {
      const cores = f.cpu_cores_by_service as Record<string, number>;
      return [
        f.writers as number,
        f.in_flight as number,
        f.runs_per_minute as number,
        f.speedup as number,
        cores.writer ?? 0,
        Object.values(cores).reduce((total, value) => total + value, 0),
        f.machine_cpu_cores as number,
        f.load_average as number,
      ];
    }),
  ]),
);
console.log(
  `failed runs: ${failures.length}${failures.length ? ` (${[...new Set(failures)].slice(0, 3).join('; ')})` : ''}`,
);
console.log(
  JSON.stringify(
    rounded({
      bench: 'writer-scaling',
      ttft_ms: TTFT_MS,
      tokens_per_second: TOKENS_PER_SECOND,
      tokens,
      slots_per_writer: slots,
      speedup_1_to_max: figures.at(-1)?.speedup,
      failures: failures.length,
      configurations: figures,
    }),
  ),
);
