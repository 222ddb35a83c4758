/**
 * Where figure 2's time goes: sequential runs with tracing on, each run's trace laid out from the
 * gateway receiving `POST /agent/stream` to the writer's model request. Prints, per span (the
 * k-th span of that name in its trace), the median start offset and duration over the runs, so a
 * change to the launch path shows up as a moved row. Tracing costs a little itself: the totals
 * here run slightly above figure 2's. `--untraced` starts the services without a trace exporter
 * (no spans are recorded) and prints only the totals: figure 2's wall time and the CPU per
 * launch, the CPU of every service process over the measured runs divided by their number (a run
 * here is the launch plus a 5-token reply, so nearly all of it is the launch), and next to it the
 * CPU of the benchmark's own nats-server, the NATS messages each service sent and received per
 * launch (its `/connz`), the consumers left on EVENTS afterwards and the server's RSS growth,
 * the CPU the machine's PostgreSQL and Redis spent per launch, and the statements each service
 * sent per launch (its own pg metrics, `/metrics`; docs/decisions/0042)
 * (docs/decisions/0041-broker-work-per-launch.md). Before the measured runs the stack idles for
 * `--idle-ms`: what the services and servers burn doing nothing (timers, heartbeats, consumer
 * pulls, collections; one-second slices, the busiest left out) is printed as CPU per second,
 * and the CPU per launch is printed once more with that idle rate over the launches' duration
 * taken off. It also prints how long each run
 * took from its last text frame to `done`, the end of a run as the author's client sees it, and
 * the read and write system calls each service made per launch (/proc/<pid>/io: nearly all of
 * them socket reads and writes, each message to another process one of each).
 * The measured runs come after `--warmup` launches, whose first slice is printed apart (a
 * process's cost right after start-up) with the curve of the rest (docs/decisions/0050).
 *
 * `--one-session` sends every launch into one author's session, as an author deep in a
 * conversation: by the measured runs the session holds twice the warm-up's messages, which the
 * router and the context compiler read at every launch.
 *
 * With `--env AGENT_ROUTER_STRATEGY=llm` the router asks the fake model for its decision at every
 * launch, and the bench prints that call's length and the launch's time to the writer's model
 * request less it: the overhead the router's call does not explain.
 *
 * `--novel` sends every launch, each in a new session, into one author's 200-file novel (120
 * chapters, characters, settings, outlines: the context benchmark's project) with its author's
 * requests in Chinese, so the compile on the way searches and assembles a real context instead
 * of an empty project's.
 *
 * `--messages` also lists every NATS message of the measured launches by kind (JetStream
 * publishes, deliveries and acks, API calls such as direct gets and consumers made and removed,
 * requests, answers, republished frames, advisories), per launch, from a subscriber on `>`
 * (support/launch-messages.ts); its copies add to nats-server's CPU in that run.
 *
 * `--pause-ms` waits that long after each measured launch, as an author reads a reply before the
 * next message: what a launch costs once the stack has been quiet (the CPU and system calls per
 * launch then include the quiet time's; for CPU, read the line net of the idle rate).
 *
 * `--node-flag=<flag>` (repeatable) starts every service with a Node or V8 option NODE_OPTIONS
 * refuses, as `capacity.ts` does: a V8 tiering flag's effect on the cold launches, for example.
 *
 *   node test/load/launch-path.ts [--runs 15] [--warmup 200] [--pause-ms 0] [--one-session] [--novel] [--untraced] [--messages] [--idle-ms 5000] [--env KEY=VALUE ...] [--node-flag=…]
 */
import { parseArgs } from 'node:util';
import { AUTHOR_REQUESTS } from '../support/chinese-project.ts';
import { startOtlpReceiver } from '../support/otlp-receiver.ts';
import {
  eventsConsumers,
  idleCpuPerSecond,
  perLaunchMessages,
  statementCounts,
} from './support/launch-counters.ts';
import {
  endLayout,
  isModelCall,
  isRequest,
  isRunSpan,
  layout,
  layoutTable,
  roundedLayout,
  type SpanRow,
  summarizeLayouts,
} from './support/launch-layout.ts';
import { type MessageSniffer, sniffMessages } from './support/launch-messages.ts';
import { type ConnectionCounters, startPrivateNats } from './support/private-nats.ts';
import {
  cpuMeter,
  loadAverage,
  namedProcessesCpuMs,
  rssKb,
  type SyscallCounts,
  syscallsOf,
  syscallsPerService,
} from './support/proc.ts';
import { distribution, rounded, sleep } from './support/stats.ts';
import { WARMUP_LAUNCHES, WARMUP_SLICE } from './support/warmup.ts';

// A nats-server of the benchmark's own, so its CPU and every connection's message counts are the
// launches' alone (the machine's has no monitoring port).
const nats = await startPrivateNats();
process.env.NATS_URL = nats.url;
const { envFromPairs, seedNovelAuthor, serviceCpuMs, startBenchStack } = await import(
  './support/bench-stack.ts'
);
const { matchDelays, plainReply, routerCallMs, streamRun, writerRequest } = await import('./support/runs.ts');

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '15' },
    warmup: { type: 'string', default: String(WARMUP_LAUNCHES) },
    'pause-ms': { type: 'string', default: '0' },
    untraced: { type: 'boolean', default: false },
    'one-session': { type: 'boolean', default: false },
    novel: { type: 'boolean', default: false },
    'idle-ms': { type: 'string', default: '5000' },
    env: { type: 'string', multiple: true, default: [] },
    messages: { type: 'boolean', default: false },
    'node-flag': { type: 'string', multiple: true, default: [] },
  },
});
const runs = Number(values.runs);
const warmup = Number(values.warmup);
/** A wait after each measured launch, as an author reads a reply before the next message. */
const pauseMs = Number(values['pause-ms']);
const traced = !values.untraced;
/** Every launch continues one author's session: by the measured runs it holds hundreds of messages. */
const oneSession = values['one-session'];
let sessionId: string | undefined;
const TTFT_MS = 100;

const receiver = traced ? await startOtlpReceiver() : undefined;
const extraEnv = envFromPairs(values.env);
/** Only a router that calls the model has a call to read back from the fake, once per run. */
const routerCalls = extraEnv.AGENT_ROUTER_STRATEGY === 'llm';
const bench = await startBenchStack({
  natsServerPid: nats.pid,
  // The test receiver reads OTLP/JSON; the services' default is http/protobuf.
  env: {
    ...(receiver
      ? { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' }
      : {}),
    ...extraEnv,
  },
  nodeFlags: values['node-flag'],
});
const layouts: Array<Map<string, SpanRow>> = [];
/** The same runs' ends: from the model's stream read to the router's last span. */
const endLayouts: Array<Map<string, SpanRow>> = [];
const toModel: number[] = [];
/**
 * Router decision on: its call as the fake served it, and POST → the writer's model request less
 * it (an upper bound: the router's own view of the call adds two hops and the reply's parse).
 */
const routerCall: number[] = [];
const beyondRouterCall: number[] = [];
/** Per slice of the warm-up: service CPU per launch and POST → model request p50 (ms). */
const warmupCurve: Array<{ launches: number; cpu_ms_per_launch: number; to_model_p50_ms: number }> = [];
/** Per run: the last text frame's arrival to `done` (step result, settlement, the run's end: what the author waits for). */
const lastTextToDone: number[] = [];
let cpuPerLaunch: Record<string, number> = {};
let brokerMsPerLaunch = 0;
// The machine's PostgreSQL and Redis serve the launches too (and nothing else while the benchmark runs).
let serversMsPerLaunch = { postgres: 0, redis: 0 };
// Statements each service sent per launch, from its own pg metrics (like the NATS counts, they do
// not move with the machine's load).
let statementsPerLaunch: Record<string, number> = {};
/** Read and write system calls each service made per launch (/proc/<pid>/io; sockets, mostly). */
let syscallsPerLaunch: Record<string, SyscallCounts> = {};
let messagesPerLaunch: Record<string, { sent: number; received: number }> = {};
let consumersLeft = 0;
/** `--messages`: every message the server routed during the measured launches, by kind. */
let sniffer: MessageSniffer | undefined;
let messageKinds: Array<{ kind: string; perLaunch: number }> = [];
/** The kinds' sum: every message of a launch. */
const messagesInAll = () =>
  rounded(
    messageKinds.reduce((sum, row) => sum + row.perLaunch, 0),
    1,
  );
let brokerRssFromKb = 0;
let brokerRssGrowthMb = 0;
/** CPU ms per second of the idle stack (services, nats-server, PostgreSQL, Redis). */
let idlePerSecond: Record<string, number> = {};
/** Wall time of the measured launches. */
let launchesMs = 0;
const idleMs = Number(values['idle-ms']);
const load = loadAverage();
try {
  const novelist = values.novel ? await seedNovelAuthor(bench) : undefined;
  const reply = { text: plainReply(5), tokens_per_second: 100, ttft_ms: TTFT_MS };
  await bench.fake.addScript({
    match: { role: 'writer' },
    responses: Array.from({ length: runs + warmup }, () => reply),
  });
  // Measured from the first counted run on: the warm-up runs are left out.
  let meter: (() => Record<string, number>) | undefined;
  // The broker works for every launch too (consumers made and dropped, API requests): shown apart.
  let brokerMeter: (() => Record<string, number>) | undefined;
  let countedFrom: ConnectionCounters[] = [];
  let serversFrom = { postgres: 0, redis: 0 };
  let statementsFrom: Record<string, number> = {};
  let syscallsFrom: Record<string, SyscallCounts> = {};
  let sliceMeter = cpuMeter(bench.pids());
  let sliceToModel: number[] = [];
  for (let index = 0; index < runs + warmup; index++) {
    if (index === warmup) {
      if (idleMs > 0) idlePerSecond = await idleCpuPerSecond(idleMs, () => bench.pids(), nats.pid);
      launchesMs = performance.now();
      meter = cpuMeter(bench.pids());
      brokerMeter = cpuMeter({ 'nats-server': nats.pid });
      countedFrom = await nats.connections();
      brokerRssFromKb = rssKb(nats.pid);
      serversFrom = { postgres: namedProcessesCpuMs('postgres'), redis: namedProcessesCpuMs('redis-server') };
      statementsFrom = await statementCounts(bench.stack.services);
      syscallsFrom = syscallsOf(bench.pids());
      if (values.messages) sniffer = await sniffMessages(nats.url, bench.stack.namespace);
    }
    receiver?.clear();
    const trace = await streamRun(
      bench.gateway,
      novelist ?? bench.author(oneSession ? 0 : index),
      // Into the novel, what its author asks (the compile searches the project for it).
      novelist ? `${AUTHOR_REQUESTS[index % AUTHOR_REQUESTS.length]}（${index}）` : `launch path ${index}`,
      sessionId ? { sessionId } : {},
    );
    if (trace.failure) throw new Error(`run failed: ${trace.failure}`);
    if (oneSession) sessionId ??= trace.sessionId;
    const delays = matchDelays(trace, await writerRequest(bench, trace.runId));
    if (index < warmup) {
      // The warm-up, in slices: how the cost of a launch falls as the processes warm.
      if (delays) sliceToModel.push(delays.toModel);
      if ((index + 1) % WARMUP_SLICE === 0 || index + 1 === warmup) {
        const launches = (index % WARMUP_SLICE) + 1;
        warmupCurve.push({
          launches: index + 1,
          cpu_ms_per_launch: rounded(serviceCpuMs(sliceMeter()) / launches),
          to_model_p50_ms: rounded(distribution(sliceToModel).p50),
        });
        sliceMeter = cpuMeter(bench.pids());
        sliceToModel = [];
      }
      continue;
    }
    if (delays) toModel.push(delays.toModel);
    const callMs = routerCalls ? await routerCallMs(bench, trace.runId) : undefined;
    if (delays && callMs !== undefined) {
      routerCall.push(callMs);
      beyondRouterCall.push(delays.toModel - callMs);
    }
    if (pauseMs > 0) await sleep(pauseMs);
    const lastText = trace.text.at(-1);
    if (lastText && trace.doneAt !== undefined) lastTextToDone.push(trace.doneAt - lastText.receivedAt);
    if (!receiver) continue;
    const spans = await receiver.waitFor((all) => {
      const model = all.find((span) => isModelCall(span) && span.startMs > trace.postedAt);
      const inTrace = (span: (typeof all)[number]) => span.traceId === model?.traceId;
      return (
        all.some((span) => isRequest(span) && inTrace(span)) &&
        all.some((span) => isRunSpan(span) && inTrace(span))
      );
    }, 10_000);
    layouts.push(layout(spans));
    endLayouts.push(endLayout(spans));
  }
  cpuPerLaunch = meter?.() ?? {};
  syscallsPerLaunch = syscallsPerService(syscallsFrom, syscallsOf(bench.pids()), runs);
  launchesMs = performance.now() - launchesMs;
  brokerMsPerLaunch = rounded((brokerMeter?.()['nats-server'] ?? 0) / runs);
  const statementsTo = await statementCounts(bench.stack.services);
  statementsPerLaunch = {};
  for (const [service, count] of Object.entries(statementsTo)) {
    statementsPerLaunch[service] = rounded((count - (statementsFrom[service] ?? 0)) / runs);
  }
  serversMsPerLaunch = {
    postgres: rounded((namedProcessesCpuMs('postgres') - serversFrom.postgres) / runs),
    redis: rounded((namedProcessesCpuMs('redis-server') - serversFrom.redis) / runs),
  };
  messagesPerLaunch = perLaunchMessages(countedFrom, await nats.connections(), runs);
  messageKinds = (await sniffer?.stop(runs)) ?? [];
  consumersLeft = await eventsConsumers(nats.url, bench.stack.namespace);
  brokerRssGrowthMb = rounded((rssKb(nats.pid) - brokerRssFromKb) / 1024);
} finally {
  await bench.stop();
  await receiver?.close();
  await nats.stop();
}

const summary = summarizeLayouts(layouts);
const endSummary = summarizeLayouts(endLayouts);

// Per service (instance ids carry a replica suffix), each divided by the measured runs.
const perService: Record<string, number> = {};
for (const [instance, ms] of Object.entries(cpuPerLaunch)) {
  const service = instance.replace(/-\d+$/, '');
  perService[service] = rounded((perService[service] ?? 0) + ms / runs);
}
const cpuMsPerLaunch = rounded(serviceCpuMs(cpuPerLaunch) / runs);
console.log(
  `launch path: ${runs} runs${traced ? ` (${layouts.length} traced)` : ', untraced'}${pauseMs > 0 ? `, ${pauseMs} ms apart` : ''}${oneSession ? ', one session' : ''}${values.novel ? ', into a 200-file novel' : ''}, POST → model request p50 ${rounded(distribution(toModel).p50)} ms, p95 ${rounded(distribution(toModel).p95)} ms; last text → done p50 ${rounded(distribution(lastTextToDone).p50)} ms; CPU per launch ${cpuMsPerLaunch} ms (${Object.entries(
    perService,
  )
    .map(([service, ms]) => `${service} ${ms}`)
    .join(
      ', ',
    )}), nats-server ${brokerMsPerLaunch} ms, PostgreSQL ${serversMsPerLaunch.postgres} ms, Redis ${serversMsPerLaunch.redis} ms; load average ${load}`,
);
if (routerCall.length > 0) {
  console.log(
    `router model decision on: its call p50 ${rounded(distribution(routerCall).p50)} ms (the fake's request → last token), POST → writer model request less the call p50 ${rounded(distribution(beyondRouterCall).p50)} ms, p95 ${rounded(distribution(beyondRouterCall).p95)} ms (${routerCall.length} runs)`,
  );
}
// The idle rate over the launches' duration, taken off: what the launches themselves cost.
const idleDuringLaunch = (name: string) => ((idlePerSecond[name] ?? 0) * launchesMs) / 1000 / runs;
const aboveIdle = {
  services: rounded(
    Object.entries(perService).reduce(
      (sum, [service, ms]) => sum + Math.max(0, ms - idleDuringLaunch(service)),
      0,
    ),
  ),
  nats: rounded(Math.max(0, brokerMsPerLaunch - idleDuringLaunch('nats-server'))),
  postgres: rounded(Math.max(0, serversMsPerLaunch.postgres - idleDuringLaunch('postgres'))),
  redis: rounded(Math.max(0, serversMsPerLaunch.redis - idleDuringLaunch('redis'))),
};
if (idleMs > 0) {
  console.log(
    `idle stack, CPU ms per second: ${Object.entries(idlePerSecond)
      .map(([name, ms]) => `${name} ${ms}`)
      .join(
        ', ',
      )}; CPU per launch above idle (${rounded(launchesMs / runs)} ms a launch): services ${aboveIdle.services} ms, nats-server ${aboveIdle.nats}, PostgreSQL ${aboveIdle.postgres}, Redis ${aboveIdle.redis}`,
  );
}
const messageRows = Object.entries(messagesPerLaunch).map(
  ([service, row]) => `${service} ${row.sent} / ${row.received}`,
);
console.log(
  `NATS messages per launch, sent / received: ${messageRows.join(', ')}; consumers on EVENTS after the launches: ${consumersLeft}, nats-server RSS grew ${brokerRssGrowthMb} MB`,
);
if (values.messages) {
  console.log(
    `NATS messages per launch by kind, ${messagesInAll()} in all (a subscriber on > saw them all; nats-server's CPU above includes its copies): ${messageKinds
      .map((row) => `${row.kind} ${row.perLaunch}`)
      .join(', ')}`,
  );
}
console.log(
  `PostgreSQL statements per launch: ${Object.entries(statementsPerLaunch)
    .map(([service, count]) => `${service} ${count}`)
    .join(', ')}`,
);
if (warmupCurve.length > 0) {
  const cold = warmupCurve[0]!;
  console.log(
    `warm-up, ${warmup} launches before the measured ones: the first ${cold.launches} after start-up (cold) ${cold.cpu_ms_per_launch} ms of service CPU per launch, POST → model request p50 ${cold.to_model_p50_ms} ms; per ${WARMUP_SLICE} launches: CPU ${warmupCurve.map((slice) => slice.cpu_ms_per_launch).join(' → ')} ms, p50 ${warmupCurve.map((slice) => slice.to_model_p50_ms).join(' → ')} ms`,
  );
}
console.log(
  `system calls per launch, write / read: ${Object.entries(syscallsPerLaunch)
    .map(([service, row]) => `${service} ${row.writes} / ${row.reads}`)
    .join(', ')}`,
);
if (traced) {
  console.log(layoutTable(summary));
  console.log('the end of the run, from the model stream read:');
  console.log(layoutTable(endSummary));
}
console.log(
  JSON.stringify({
    bench: 'launch-path',
    runs,
    warmup_launches: warmup,
    pause_ms: pauseMs,
    one_session: oneSession,
    novel: values.novel,
    cold: warmupCurve[0],
    warmup_curve: warmupCurve,
    traced,
    load_average: load,
    to_model_p50_ms: rounded(distribution(toModel).p50),
    to_model_p95_ms: rounded(distribution(toModel).p95),
    ...(routerCall.length > 0
      ? {
          router_call_p50_ms: rounded(distribution(routerCall).p50),
          beyond_router_call_p50_ms: rounded(distribution(beyondRouterCall).p50),
          beyond_router_call_p95_ms: rounded(distribution(beyondRouterCall).p95),
        }
      : {}),
    last_text_to_done_p50_ms: rounded(distribution(lastTextToDone).p50),
    last_text_to_done_p95_ms: rounded(distribution(lastTextToDone).p95),
    cpu_ms_per_launch: cpuMsPerLaunch,
    cpu_ms_per_launch_by_service: perService,
    nats_server_cpu_ms_per_launch: brokerMsPerLaunch,
    postgres_cpu_ms_per_launch: serversMsPerLaunch.postgres,
    redis_cpu_ms_per_launch: serversMsPerLaunch.redis,
    idle_cpu_ms_per_second: idlePerSecond,
    cpu_ms_per_launch_above_idle: aboveIdle,
    ms_per_launch: rounded(launchesMs / runs),
    nats_messages_per_launch: messagesPerLaunch,
    ...(values.messages
      ? { nats_messages_by_kind: messageKinds, nats_messages_in_all: messagesInAll() }
      : {}),
    statements_per_launch: statementsPerLaunch,
    syscalls_per_launch: syscallsPerLaunch,
    events_consumers_after: consumersLeft,
    nats_server_rss_growth_mb: brokerRssGrowthMb,
    spans: roundedLayout(summary),
    end_spans: roundedLayout(endSummary),
  }),
);
