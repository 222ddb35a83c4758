// Loaded into every service of a capacity run (`node --import`), plain JavaScript so that no
// process loads the TypeScript transformer for it. It samples the event loop as the services'
// runtime metrics do, and on SIGUSR2 (the benchmark sends one when a window opens and one when it
// closes) prints one line with what it saw since the previous signal and starts again. A signal,
// not a `/metrics` scrape: a scrape serialises every metric on the loop it measures, tens of ms
// under load, and those stalls would be in the figures and in the frames' delays.
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';

const SAMPLE_MS = 10;
const histogram = monitorEventLoopDelay({ resolution: SAMPLE_MS });
histogram.enable();
let since = performance.eventLoopUtilization();

process.on('SIGUSR2', () => {
  const now = performance.eventLoopUtilization();
  const busy = performance.eventLoopUtilization(now, since).utilization;
  since = now;
  const late = (ns) => Math.max(0, ns / 1e6 - SAMPLE_MS);
  const figures = {
    p50Ms: late(histogram.percentile(50)),
    p99Ms: late(histogram.percentile(99)),
    maxMs: late(histogram.max),
    utilization: busy,
  };
  histogram.reset();
  process.stdout.write(`quill-loop ${JSON.stringify(figures)}\n`);
});
