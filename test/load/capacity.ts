/**
 * Figure 3: how many concurrent streaming runs one machine holds with every service
 * running. Steps up the number of open runs (the fake LLM streams each at 20 tokens/s for longer
 * than the whole ramp) and, at each level, measures the frame delay of the frames received in a
 * window once the level is reached, and the delay of every token of those frames (a token also
 * waits in the writer for the newest token of its frame: `held`). Stops when the frame p99 exceeds
 * the limit or any run fails; the capacity is the last level that held. Prints a table, the CPU
 * each process spent per streamed frame at each level, and one JSON line.
 *
 * New runs start at 50 a second (a launch storm is another figure: TTFT under load), and the
 * window opens a second after every run has received its first text frame. For each window it
 * also prints how late each process's event loop ran a ready callback and how busy it was
 * (support/loop-delay.ts): which process a frame queued in.
 *
 * `--profile` runs the services under V8's sampling profiler and prints, for the writer and the
 * gateway at each level, how many µs of their CPU per streamed token went where (model read,
 * frame publish, …; support/cpu-profile.ts). The profiler costs a few per cent of CPU itself,
 * so the capacity of a profiled run is not figure 3; `--keep-profiles` leaves the profiles on disk
 * and prints where, with each level's window and the services' pids. `--gc` starts the services with `--trace-gc`
 * and prints the writer's and the gateway's collections in each window: how often the young
 * generation is collected, how long it holds the process, and how fast what outlives it grows
 * (support/gc-trace.ts; docs/decisions/0071). `--node-flag=<flag>` (repeatable) starts every
 * service with a Node or V8 option NODE_OPTIONS refuses, such as `--node-flag=--minor-ms`.
 *
 *   node test/load/capacity.ts [--levels 100,200,250,…] [--rate 20] [--limit-ms 100] [--writers 1] [--env KEY=VALUE] [--profile [--keep-profiles]] [--gc] [--node-flag=…]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { envFromPairs, serviceCpuMs, startBenchStack } from './support/bench-stack.ts';
import { cpuPerTable, kernelPerTokenTable, levelTable } from './support/capacity-tables.ts';
import { monotonicMicros, profileTable, readProfiles } from './support/cpu-profile.ts';
import { createGcRecorder, gcFigures } from './support/gc-trace.ts';
import { countersByService } from './support/launch-counters.ts';
import {
  createLoopRecorder,
  LOOP_MONITOR_FLAGS,
  type LoopDelay,
  loopDelayTable,
} from './support/loop-delay.ts';
import { cpuByService, inWaves } from './support/phases.ts';
import {
  cpuMeter,
  loadAverage,
  machineCpuMeter,
  namedProcessesCpuMs,
  systemCpuMeter,
} from './support/proc.ts';
import { matchDelays, plainReply, type RunTrace, streamRun, writerRequest } from './support/runs.ts';
import { distribution, rounded, sleep, table } from './support/stats.ts';

const { values } = parseArgs({
  options: {
    levels: { type: 'string', default: '100,200,250,300,350,400,450,500,600' },
    rate: { type: 'string', default: '20' },
    'limit-ms': { type: 'string', default: '100' },
    'window-ms': { type: 'string', default: '4000' },
    env: { type: 'string', multiple: true, default: [] },
    writers: { type: 'string', default: '1' },
    profile: { type: 'boolean', default: false },
    'keep-profiles': { type: 'boolean', default: false },
    gc: { type: 'boolean', default: false },
    'node-flag': { type: 'string', multiple: true, default: [] },
  },
});
const levels = values.levels.split(',').map(Number);
const tokensPerSecond = Number(values.rate);
const limitMs = Number(values['limit-ms']);
const windowMs = Number(values['window-ms']);
/** Run starts per second while ramping. */
const START_RATE = 50;
const extraEnv = envFromPairs(values.env);
const profileDir = values.profile ? mkdtempSync(join(tmpdir(), 'capacity-profiles-')) : undefined;
if (profileDir) {
  // Sampled every 0.5 ms: enough samples in a 4 s window, little of the CPU it measures.
  const profiling = `--cpu-prof --cpu-prof-dir=${profileDir} --cpu-prof-interval=500`;
  extraEnv.NODE_OPTIONS = [extraEnv.NODE_OPTIONS, profiling].filter(Boolean).join(' ');
}
/** What a profiled run breaks the writer's and the gateway's CPU into, first match first. */
const PROFILE_CATEGORIES = [
  { name: 'model read', pattern: /libs\/llm\/src\/(client|sse-chunks|model-transport)\.ts|undici\// },
  { name: 'frame publish', pattern: /libs\/bus\/src\/(publish|acked-publisher|run-events)\.ts/ },
  { name: 'agent runtime', pattern: /libs\/agent-runtime\/src\// },
  { name: 'SSE write', pattern: /node:_http_outgoing|services\/gateway\/src\/sse-relay\.ts/ },
  { name: 'frame read', pattern: /libs\/bus\/src\/(codec|live-reads)\.ts|services\/gateway\/src\/run-feed/ },
  { name: 'NATS client', pattern: /@nats-io\// },
  { name: 'PostgreSQL', pattern: /node_modules\/pg(-pool|-protocol)?\// },
  { name: 'Redis', pattern: /node_modules\/ioredis\// },
  { name: 'telemetry', pattern: /@opentelemetry\// },
];
const profiledWindows: Array<{ level: number; fromUs: number; toUs: number }> = [];
const gcRecorder = values.gc ? createGcRecorder() : undefined;
const gcWindows: Array<{ level: number; fromMs: number; toMs: number }> = [];
const loopRecorder = createLoopRecorder();
const loopWindows: Array<{ level: number; loops: Record<string, LoopDelay> }> = [];

interface OpenRun {
  /** Filled in while the run streams. */
  live?: RunTrace;
  done: Promise<RunTrace>;
  ended: boolean;
}

const writers = Number(values.writers);
const bench = await startBenchStack({
  env: extraEnv,
  replicas: { writer: writers },
  nodeFlags: [...LOOP_MONITOR_FLAGS, ...(gcRecorder ? ['--trace-gc'] : []), ...values['node-flag']],
  onServiceLine: (instance, line) => {
    loopRecorder.onLine(instance, line);
    gcRecorder?.onLine(instance, line);
  },
});
// Read now: a stopped service leaves `pids()`, and its profile is written only when it stops.
const servicePids = bench.pids();
const routerCatchUps = async () =>
  (await countersByService(bench.stack.services, 'quill_router_step_log_catch_ups_total', 'router')).router ??
  0;
const figures: Array<Record<string, number | string>> = [];
const open: OpenRun[] = [];
const abort = new AbortController();
let capacity = 0;
let stoppedBy = 'all levels held';
try {
  // Longer than the whole ramp, so every run streams until the end.
  const rampSeconds =
    levels.reduce((total, level, index) => total + (level - (levels[index - 1] ?? 0)) / START_RATE, 0) +
    levels.length * (windowMs / 1000 + 4) +
    30;
  const reply = {
    text: plainReply(Math.ceil(rampSeconds * tokensPerSecond)),
    tokens_per_second: tokensPerSecond,
    ttft_ms: 100,
  };
  await bench.fake.addScript({
    match: { role: 'writer' },
    responses: Array.from({ length: levels.at(-1)! + 10 }, () => reply),
  });
  for (const level of levels) {
    const adding = level - open.length;
    const spreadMs = (adding * 1000) / START_RATE;
    const started = Array.from({ length: adding }, (_, index) => {
      const author = bench.author(open.length + index);
      const run: OpenRun = { ended: false, done: Promise.resolve(undefined as never) };
      run.done = sleep((spreadMs * index) / adding)
        .then(() =>
          streamRun(bench.gateway, author, `capacity ${level}`, {
            signal: abort.signal,
            onTrace: (trace) => {
              run.live = trace;
            },
          }),
        )
        .finally(() => {
          run.ended = true;
        });
      return run;
    });
    open.push(...started);
    // The window opens once every run streams (its first text frame arrived) and a second more:
    // what it measures is the relay at this level, not the launches before it.
    await sleep(spreadMs);
    const streamingBy = performance.now() + 30_000;
    while (
      performance.now() < streamingBy &&
      !open.every((run) => run.ended || (run.live?.text.length ?? 0) > 0)
    ) {
      await sleep(100);
    }
    await sleep(1000);
    // The routers' reads of their runs' step logs for what core delivery lost (docs/decisions/0078),
    // counted from their /metrics outside the CPU meters: a scrape costs a router CPU of its own.
    const catchUpsBefore = await routerCatchUps();
    const catchUpsFrom = performance.now();
    // Before the CPU meters start: the services' answers take a turn or two.
    await loopRecorder.open(bench.pids());
    const load = loadAverage();
    const stopCpu = cpuMeter({ ...bench.pids(), ...bench.otherPids() });
    const stopSystem = systemCpuMeter({ ...bench.pids(), ...bench.otherPids() });
    const stopMachine = machineCpuMeter();
    // The machine's Redis (shared with nothing else while the benchmark runs): the per-run
    // renewals of locks and leases show up here.
    const redisBefore = namedProcessesCpuMs('redis-server');
    const windowStart = performance.timeOrigin + performance.now();
    const windowFromUs = monotonicMicros();
    await sleep(windowMs);
    const windowEnd = performance.timeOrigin + performance.now();
    profiledWindows.push({ level, fromUs: windowFromUs, toUs: monotonicMicros() });
    gcWindows.push({ level, fromMs: windowStart, toMs: windowEnd });
    const cpu = stopCpu();
    const system = cpuByService(stopSystem());
    const machineMs = stopMachine();
    const redisMs = namedProcessesCpuMs('redis-server') - redisBefore;
    loopWindows.push({ level, loops: await loopRecorder.close() });
    const catchUpsPerSecond =
      (((await routerCatchUps()) - catchUpsBefore) * 1000) / (performance.now() - catchUpsFrom);
    // A run that ended before the abort is a failure at this level.
    const ended = open.filter((run) => run.ended).map((run) => run.live!);
    const live = open.flatMap((run) => (run.live ? [run.live] : []));
    const requests = await inWaves(live.length, 16, 0, (index) => writerRequest(bench, live[index]!.runId));
    const delays: number[] = [];
    const tokenDelays: number[] = [];
    const heldDelays: number[] = [];
    let frames = 0;
    live.forEach((trace, index) => {
      const matched = matchDelays(trace, requests[index]);
      if (!matched) return;
      let end = 0;
      matched.frameAt.forEach((at, frame) => {
        const count = matched.frameTokens[frame]!;
        end += count;
        if (at < windowStart || at > windowEnd) return;
        delays.push(matched.frame[frame]!);
        tokenDelays.push(...matched.token.slice(end - count, end));
        heldDelays.push(...matched.held.slice(end - count, end));
        frames++;
      });
    });
    const frame = distribution(delays);
    const token = distribution(tokenDelays);
    const services = cpuByService(
      Object.fromEntries(Object.entries(cpu).filter(([name]) => name in bench.pids())),
    );
    const servicesCpu = serviceCpuMs(services);
    figures.push({
      level,
      load_average: load,
      failures: ended.length,
      frame_p50_ms: frame.p50,
      frame_p99_ms: frame.p99,
      // What the author sees: every token, including the wait for the newest of its frame.
      token_p50_ms: token.p50,
      token_p99_ms: token.p99,
      held_p99_ms: distribution(heldDelays).p99,
      tokens_per_frame: tokenDelays.length / Math.max(1, frames),
      frames_per_second: (frames * 1000) / windowMs,
      tokens_received_per_second: (tokenDelays.length * 1000) / windowMs,
      services_cpu_cores: servicesCpu / windowMs,
      fake_llm_cpu_cores: (cpu['fake-llm'] ?? 0) / windowMs,
      nats_cpu_cores: (cpu['nats-server'] ?? 0) / windowMs,
      redis_cpu_cores: redisMs / windowMs,
      client_cpu_cores: (cpu['bench-client'] ?? 0) / windowMs,
      machine_cpu_cores: machineMs / windowMs,
      router_catch_ups_per_second: catchUpsPerSecond,
      ...Object.fromEntries(Object.entries(services).map(([name, ms]) => [`${name}_cores`, ms / windowMs])),
      // The kernel's part of the same (system time: socket reads and writes, mostly).
      ...Object.fromEntries(
        Object.entries(system).map(([name, ms]) => [`${name}_system_cores`, ms / windowMs]),
      ),
    });
    const examples = ended.slice(0, 3).map((trace) => trace.failure ?? trace.terminal);
    if (ended.length > 0) {
      stoppedBy = `${ended.length} run(s) failed at ${level}: ${examples.join('; ')}`;
      break;
    }
    if (!(frame.p99 <= limitMs)) {
      stoppedBy = `p99 ${frame.p99.toFixed(0)} ms > ${limitMs} ms at ${level}`;
      break;
    }
    capacity = level;
  }
} finally {
  abort.abort();
  await Promise.allSettled(open.map((run) => run.done));
  await bench.stop();
}

console.log(
  `capacity: concurrent runs at ${tokensPerSecond} tokens/s until p99 frame delay > ${limitMs} ms or a failure (${writers} writer process${writers > 1 ? 'es' : ''})`,
);
console.log(levelTable(figures));
console.log('CPU per streamed frame, µs, by process:');
console.log(cpuPerTable(figures, 'frames_per_second'));
console.log('CPU per streamed token, µs, by process:');
console.log(cpuPerTable(figures, 'tokens_received_per_second'));
console.log('Of that, in the kernel (system time), µs per streamed token:');
console.log(kernelPerTokenTable(figures));
// Where a frame queues: how late each event loop ran a ready callback in the window.
console.log('Event loops in the window: how late a ready callback ran, and the share of time busy:');
console.log(loopDelayTable(loopWindows));
console.log(
  `Step-log catch-ups the routers made a second in the window: ${figures.map((figure) => `${figure.level} runs ${Number(figure.router_catch_ups_per_second).toFixed(1)}`).join(', ')}`,
);
if (profileDir) {
  console.log(
    'Where the writer and the gateway spent their CPU per streamed token, µs (V8 samples, --profile):',
  );
  console.log(
    profileTable(readProfiles(profileDir), profiledWindows, figures, servicePids, PROFILE_CATEGORIES),
  );
  // Kept for a closer read (a function's own samples, its callers): the windows say which
  // samples each level's figures come from, on the clock the profiles are stamped with.
  if (values['keep-profiles'])
    console.log(
      `profiles kept in ${profileDir}:`,
      JSON.stringify({ windows: profiledWindows, pids: servicePids }),
    );
  else rmSync(profileDir, { recursive: true, force: true });
}
const gc = gcRecorder
  ? gcFigures(
      gcRecorder,
      gcWindows,
      Object.keys(servicePids).filter((instance) => /^(writer|gateway)-/.test(instance)),
    )
  : undefined;
if (gc) {
  console.log('Garbage collections in each window (--gc): pauses in ms, heap in MB:');
  console.log(table(gc.rows));
}
console.log(`capacity ${capacity} concurrent runs (${stoppedBy})`);
console.log(
  JSON.stringify(
    rounded({
      bench: 'capacity',
      writers,
      tokens_per_second: tokensPerSecond,
      limit_ms: limitMs,
      capacity,
      stopped_by: stoppedBy,
      levels: figures,
      event_loops: Object.fromEntries(loopWindows.map(({ level, loops }) => [level, loops])),
      ...(gc ? { gc: gc.json } : {}),
    }),
  ),
);
