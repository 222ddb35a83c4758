/**
 * What one service allocates per streamed frame, and where: `--runs` runs stream at `--rate`
 * tokens a second on a stack of their own; once they all stream, the service's heap profiler
 * samples its allocations for `--seconds` (one sample per `--interval` bytes on average), the ones
 * collected since included, so short-lived garbage counts as much as what stays. Prints the bytes
 * per streamed frame in all and the functions that allocated the most, by their own allocations
 * or with `--inclusive` with what they called. What a young collection costs grows with what it
 * finds alive, how often it runs with what is allocated: this is the second (docs/decisions/0074).
 * The service's inspector opens on 127.0.0.1:9229 (support/inspector.ts), so nothing else may
 * hold that port.
 *
 *   node test/load/allocations.ts [--service writer] [--runs 300] [--rate 20] [--seconds 10] [--interval 1024] [--top 40] [--inclusive]
 */
import { parseArgs } from 'node:util';
import { startBenchStack } from './support/bench-stack.ts';
import { allocationsByFunction, type SamplingHeapProfile } from './support/heap-samples.ts';
import { openInspector } from './support/inspector.ts';
import { loadAverage } from './support/proc.ts';
import { plainReply, type RunTrace, streamRun } from './support/runs.ts';
import { rounded, sleep, table } from './support/stats.ts';

const { values } = parseArgs({
  options: {
    service: { type: 'string', default: 'writer' },
    runs: { type: 'string', default: '300' },
    rate: { type: 'string', default: '20' },
    seconds: { type: 'string', default: '10' },
    interval: { type: 'string', default: '1024' },
    top: { type: 'string', default: '40' },
    inclusive: { type: 'boolean', default: false },
  },
});
const runCount = Number(values.runs);
const rate = Number(values.rate);
const seconds = Number(values.seconds);
/** Starts spread over the ramp, as the capacity benchmark spreads them (50 a second). */
const START_GAP_MS = 20;

const bench = await startBenchStack();
const abort = new AbortController();
const traces: RunTrace[] = [];
let runs: Array<Promise<RunTrace>> = [];
try {
  const streamSeconds = (runCount * START_GAP_MS) / 1000 + seconds + 60;
  await bench.fake.addScript({
    match: { role: 'writer' },
    responses: Array.from({ length: runCount }, () => ({
      text: plainReply(Math.ceil(streamSeconds * rate)),
      tokens_per_second: rate,
      ttft_ms: 100,
    })),
  });
  runs = Array.from({ length: runCount }, (_, index) =>
    sleep(index * START_GAP_MS).then(() =>
      streamRun(bench.gateway, bench.author(index), 'allocations', {
        signal: abort.signal,
        onTrace: (trace) => traces.push(trace),
      }),
    ),
  );
  // Measured once every run streams, and a few seconds more: the launches' garbage is not in it.
  await sleep(runCount * START_GAP_MS);
  const streamingBy = performance.now() + 60_000;
  const waitingForText = () =>
    traces.length < runCount || traces.some((trace) => trace.text.length === 0 && !trace.failure);
  while (waitingForText()) {
    if (performance.now() > streamingBy) throw new Error('runs still without text after 60 s');
    await sleep(200);
  }
  const failed = traces.filter((trace) => trace.failure).length;
  if (failed > 0) throw new Error(`${failed} of ${runCount} runs failed before the measurement`);
  await sleep(3000);
  const pid = Object.entries(bench.pids()).find(([instance]) => instance.startsWith(values.service))?.[1];
  if (pid === undefined) throw new Error(`no ${values.service} process`);
  const inspector = await openInspector(pid);
  const framesSoFar = () => traces.reduce((sum, trace) => sum + trace.text.length, 0);
  await inspector.send('HeapProfiler.enable');
  const load = loadAverage();
  const framesBefore = framesSoFar();
  await inspector.send('HeapProfiler.startSampling', {
    samplingInterval: Number(values.interval),
    includeObjectsCollectedByMinorGC: true,
    includeObjectsCollectedByMajorGC: true,
  });
  await sleep(seconds * 1000);
  const { profile } = await inspector.send<{ profile: SamplingHeapProfile }>('HeapProfiler.stopSampling');
  const frames = framesSoFar() - framesBefore;
  inspector.close();
  report(profile, frames, load);
} finally {
  abort.abort();
  await Promise.allSettled(runs);
  await bench.stop();
}

function report(profile: SamplingHeapProfile, frames: number, load: number): void {
  const { total, bytes } = allocationsByFunction(profile, { inclusive: values.inclusive });
  const perFrame = (value: number) => Math.round(value / Math.max(1, frames));
  console.log(
    `${values.service}: ${perFrame(total)} B allocated per streamed frame (${frames} frames in ${seconds} s, ${runCount} runs at ${rate} tokens/s, load ${load})`,
  );
  console.log(
    table([
      ['B per frame', values.inclusive ? 'function, with what it called' : 'function, its own allocations'],
      ...[...bytes]
        .sort((a, b) => b[1] - a[1])
        .slice(0, Number(values.top))
        .map(([label, value]) => [perFrame(value), label]),
    ]),
  );
  console.log(
    JSON.stringify({
      bench: 'allocations',
      service: values.service,
      runs: runCount,
      rate,
      seconds,
      load_average: load,
      frames,
      bytes_per_frame: rounded(total / Math.max(1, frames), 0),
    }),
  );
}
