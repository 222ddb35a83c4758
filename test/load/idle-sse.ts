/**
 * Figure 5: memory per open SSE connection on one gateway, at thousands of idle streams
 * with heartbeats running. A few runs stay open without frames (the fake LLM waits ten minutes
 * before its first token); the client opens `streams` resume streams
 * (`GET /agent/runs/:runId/stream`) spread over them. Each holds what any open stream holds at the
 * gateway (socket, response, heartbeat timer, the run's event subscription, the watch), which is
 * the per-connection cost whether the stream started the run or resumed it. Reads VmRSS of the
 * gateway from /proc before and after. Prints a table and one JSON line.
 *
 *   node test/load/idle-sse.ts [--streams 5000] [--runs 10] [--env KEY=VALUE ...]
 */
import { parseArgs } from 'node:util';
import { envFromPairs, startBenchStack } from './support/bench-stack.ts';
import { inWaves } from './support/phases.ts';
import { cpuMeter, loadAverage, rssKb } from './support/proc.ts';
import { type RunTrace, streamRun } from './support/runs.ts';
import { readSse } from './support/sse-reader.ts';
import { rounded, sleep, table } from './support/stats.ts';

const { values } = parseArgs({
  options: {
    streams: { type: 'string', default: '5000' },
    runs: { type: 'string', default: '10' },
    'heartbeat-s': { type: 'string', default: '5' },
    env: { type: 'string', multiple: true, default: [] },
  },
});
const streamCount = Number(values.streams);
const runCount = Number(values.runs);
const heartbeatS = Number(values['heartbeat-s']);

const bench = await startBenchStack({
  env: {
    AGENT_SSE_HEARTBEAT_INTERVAL_S: String(heartbeatS),
    // The idle runs wait for a first token far longer than a benchmark lasts.
    LLM_FIRST_TOKEN_TIMEOUT_S: '900',
    ...envFromPairs(values.env),
  },
});
const abort = new AbortController();
const owners: Array<Promise<RunTrace>> = [];
let figure: Record<string, unknown> = {};
try {
  const gatewayPid =
    bench.pids()[bench.stack.services.find((service) => service.name === 'gateway')!.instanceId]!;
  const natsPid = bench.otherPids()['nats-server'];
  await bench.fake.addScript({
    match: { role: 'writer' },
    responses: Array.from({ length: runCount }, () => ({ text: 'idle', ttft_ms: 600_000 })),
  });
  // The runs' own streams stay open too: a run nobody streams is stopped after the grace period.
  const runs: Array<{ runId: string; author: ReturnType<typeof bench.author> }> = [];
  for (let index = 0; index < runCount; index++) {
    const author = bench.author(index);
    const runId = await new Promise<string>((resolve, reject) => {
      owners.push(
        streamRun(bench.gateway, author, `idle ${index}`, {
          signal: abort.signal,
          // These runs idle on purpose.
          stallMs: Number.POSITIVE_INFINITY,
          onTrace: (trace) => {
            const poll = setInterval(() => {
              if (trace.runId) {
                clearInterval(poll);
                resolve(trace.runId);
              } else if (trace.failure) {
                clearInterval(poll);
                reject(new Error(trace.failure));
              }
            }, 20);
          },
        }),
      );
    });
    runs.push({ runId, author });
  }
  // Warm the route (JIT, pools) with a few streams that close again, then settle.
  await openStreams(50, 10).then((streams) => streams.close());
  await sleep(3000);
  const rssBefore = rssKb(gatewayPid);
  const natsBefore = natsPid ? rssKb(natsPid) : Number.NaN;
  const openedAt = performance.now();
  const streams = await openStreams(streamCount, 200);
  const openSeconds = (performance.now() - openedAt) / 1000;
  // Let at least two heartbeats go out on every stream, and the heap settle.
  await sleep(heartbeatS * 2000 + 2000);
  const stopCpu = cpuMeter({ gateway: gatewayPid });
  await sleep(heartbeatS * 1000);
  const idleCpuMs = stopCpu().gateway!;
  const rssAfter = rssKb(gatewayPid);
  const natsAfter = natsPid ? rssKb(natsPid) : Number.NaN;
  const consumers = await consumerCount();
  await streams.close();
  await sleep(3000);
  const rssClosed = rssKb(gatewayPid);
  figure = {
    streams: streams.open(),
    failed_to_open: streamCount - streams.open(),
    heartbeats_seen: streams.comments(),
    open_seconds: openSeconds,
    load_average: loadAverage(),
    gateway_rss_before_kb: rssBefore,
    gateway_rss_after_kb: rssAfter,
    gateway_rss_closed_kb: rssClosed,
    kb_per_stream: (rssAfter - rssBefore) / Math.max(1, streams.open()),
    nats_server_kb_per_stream: (natsAfter - natsBefore) / Math.max(1, streams.open()),
    event_consumers_open: consumers,
    gateway_idle_cpu_cores: idleCpuMs / (heartbeatS * 1000),
  };

  /** Opens `count` resume streams, `concurrency` at a time; resolves once all have their first frame. */
  async function openStreams(count: number, concurrency: number) {
    const controller = new AbortController();
    let open = 0;
    let comments = 0;
    const reading: Array<Promise<unknown>> = [];
    await inWaves(count, concurrency, 0, async (index) => {
      const run = runs[index % runs.length]!;
      await new Promise<void>((resolve) => {
        let first = true;
        const done = readSse({
          url: `${bench.gateway}/api/v1/agent/runs/${run.runId}/stream`,
          headers: run.author.auth,
          signal: controller.signal,
          onComment() {
            comments++;
          },
          onEvent() {
            if (first) {
              first = false;
              open++;
              resolve();
            }
            return false;
          },
        })
          .catch(() => undefined)
          .finally(() => resolve());
        reading.push(done);
      });
    });
    return {
      open: () => open,
      comments: () => comments,
      async close() {
        controller.abort();
        await Promise.allSettled(reading);
      },
    };
  }

  async function consumerCount(): Promise<number> {
    const { connect } = await import('@nats-io/transport-node');
    const { jetstreamManager } = await import('@nats-io/jetstream');
    const { busNames } = await import('@quill/contracts');
    const nats = await connect({ servers: bench.stack.env.NATS_URL! });
    try {
      const info = await (await jetstreamManager(nats)).streams.info(
        busNames(bench.stack.namespace).streams.events,
      );
      return info.state.consumer_count;
    } finally {
      await nats.close();
    }
  }
} finally {
  abort.abort();
  await Promise.allSettled(owners);
  await bench.stop();
}

console.log(
  `idle SSE: ${streamCount} resume streams over ${runCount} open runs on one gateway, heartbeat ${heartbeatS} s`,
);
console.log(
  table([
    [
      'streams',
      'KB/stream',
      'gateway RSS before→after (MB)',
      'after close',
      'nats KB/stream',
      'consumers',
      'open s',
      'idle CPU',
    ],
    [
      figure.streams as number,
      figure.kb_per_stream as number,
      `${((figure.gateway_rss_before_kb as number) / 1024).toFixed(0)} → ${((figure.gateway_rss_after_kb as number) / 1024).toFixed(0)}`,
      ((figure.gateway_rss_closed_kb as number) / 1024).toFixed(0),
      figure.nats_server_kb_per_stream as number,
      figure.event_consumers_open as number,
      figure.open_seconds as number,
      figure.gateway_idle_cpu_cores as number,
    ],
  ]),
);
console.log(
  JSON.stringify(rounded({ bench: 'idle-sse', heartbeat_s: heartbeatS, runs: runCount, ...figure })),
);
