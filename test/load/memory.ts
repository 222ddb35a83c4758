/**
 * Memory per service: the resident set (VmRSS, /proc) of every service process once the stack is
 * up, idle `--idle-s` later, at its peak while `--runs` runs stream at once, and idle again
 * `--idle-s` after they ended; then the writer idle after its first token count (one more run
 * whose model reports no usage, as a stopped stream does: the writer estimates it, building the
 * tokenizer's table, docs/decisions/0028, 0059); and what starting one more writer replica costs
 * (time to ready, CPU in its first seconds, RSS once idle). The context service builds the
 * tokenizer's table at start-up, every other process when it first counts; a quiet process gives
 * back what its young generation grew after MEMORY_IDLE_REDUCE_S (README "Performance", decision
 * 0040), so the default idle wait is longer than that. Services start from the compile cache, as
 * the image's do. Prints a table and one JSON line.
 *
 *   node test/load/memory.ts [--runs 200] [--tokens 100] [--rate 20] [--idle-s 40] [--env KEY=VALUE …]
 */
import { parseArgs } from 'node:util';
import { envFromPairs, startBenchStack } from './support/bench-stack.ts';
import { inWaves } from './support/phases.ts';
import { cpuMs, loadAverage, rssKb } from './support/proc.ts';
import { plainReply, streamRun } from './support/runs.ts';
import { rounded, sleep, table } from './support/stats.ts';

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '200' },
    tokens: { type: 'string', default: '100' },
    rate: { type: 'string', default: '20' },
    'idle-s': { type: 'string', default: '40' },
    env: { type: 'string', multiple: true, default: [] },
  },
});
const runCount = Number(values.runs);
const tokens = Number(values.tokens);
const idleSeconds = Number(values['idle-s']);

const mb = (kb: number) => kb / 1024;
const readRss = (pids: Record<string, number | undefined>) =>
  Object.fromEntries(
    Object.entries(pids).flatMap(([name, pid]) => {
      if (pid === undefined) return [];
      try {
        return [[name, rssKb(pid)]];
      } catch {
        return [];
      }
    }),
  ) as Record<string, number>;

const load = loadAverage();
const bench = await startBenchStack({ env: envFromPairs(values.env) });
let result: Record<string, unknown> = {};
try {
  const reply = { text: plainReply(tokens), tokens_per_second: Number(values.rate), ttft_ms: 100 };
  await bench.fake.addScript({
    match: { role: 'writer' },
    responses: Array.from({ length: runCount + 10 }, () => reply),
  });
  const pids = bench.pids();
  const ready = readRss(pids);
  // Idle: start-up done, background warm-ups (if any) finished.
  await sleep(idleSeconds * 1000);
  const idle = readRss(pids);

  // At `runs` runs streaming at once: the highest reading of each process.
  const peak: Record<string, number> = { ...idle };
  const sampler = setInterval(() => {
    for (const [name, kb] of Object.entries(readRss(pids))) peak[name] = Math.max(peak[name] ?? 0, kb);
  }, 250);
  const traces = await inWaves(runCount, runCount, Math.min(4000, runCount * 20), (index) =>
    streamRun(bench.gateway, bench.author(index), `memory ${index}`),
  );
  clearInterval(sampler);
  await sleep(idleSeconds * 1000);
  const after = readRss(pids);

  // The writer's first count: a reply without usage is estimated (newest script first).
  await bench.fake.addScript({ match: { role: 'writer' }, responses: [{ ...reply, no_usage: true }] });
  const counted = await streamRun(bench.gateway, bench.author(runCount), 'memory: first count');
  await sleep(idleSeconds * 1000);
  const writerName = Object.keys(pids).find((name) => name.startsWith('writer'))!;
  const afterFirstCount = readRss({ [writerName]: pids[writerName] });

  // One more writer replica, as a scale-out would start it.
  const startedAt = performance.now();
  const extra = await bench.stack.startService('writer');
  const readyMs = performance.now() - startedAt;
  const extraPid = extra.child.pid!;
  const startCpuMs = cpuMs(extraPid);
  await sleep(idleSeconds * 1000);
  const extraCpuMs = cpuMs(extraPid);
  result = {
    load_average_before: load,
    load_average: loadAverage(),
    runs: runCount,
    failures: [...traces, counted].filter((trace) => trace.failure).length,
    services: Object.keys(idle).map((name) => ({
      instance: name,
      ready_mb: mb(ready[name] ?? Number.NaN),
      idle_mb: mb(idle[name]!),
      peak_mb: mb(peak[name] ?? Number.NaN),
      after_mb: mb(after[name] ?? Number.NaN),
    })),
    writer_after_first_count_mb: mb(afterFirstCount[writerName] ?? Number.NaN),
    extra_writer: {
      ready_ms: readyMs,
      // CPU of the process until ready, and then while idle.
      cpu_ms_to_ready: startCpuMs,
      cpu_ms_idle_after: extraCpuMs - startCpuMs,
      idle_mb: mb(rssKb(extraPid)),
    },
  };
} finally {
  await bench.stop();
}

const services = result.services as Array<Record<string, number | string>>;
const extraWriter = result.extra_writer as Record<string, number>;
console.log(
  `memory: RSS per service once up, idle, and at ${runCount} runs streaming (load ${result.load_average_before} → ${result.load_average})`,
);
console.log(
  table([
    [
      'process',
      'stack up MB',
      `idle ${idleSeconds} s MB`,
      `peak MB at ${runCount} runs`,
      `${idleSeconds} s after MB`,
    ],
    ...services.map((row) => [row.instance!, row.ready_mb!, row.idle_mb!, row.peak_mb!, row.after_mb!]),
  ]),
);
console.log(
  `the writer ${idleSeconds} s after its first token count (a reply without usage, estimated): ${Number(result.writer_after_first_count_mb).toFixed(0)} MB`,
);
console.log(
  `one more writer: ready in ${extraWriter.ready_ms!.toFixed(0)} ms, ${extraWriter.cpu_ms_to_ready} ms CPU to ready, ${extraWriter.cpu_ms_idle_after} ms CPU in the next ${idleSeconds} s, ${extraWriter.idle_mb!.toFixed(0)} MB idle`,
);
console.log(JSON.stringify(rounded({ bench: 'memory', ...result })));
