/**
 * Chaos on the run path (README "Fault tolerance"): batches of concurrent chapter runs on two
 * replicas of every service, one fault per batch — kill -9 and SIGTERM of each service type, a
 * writer SIGSTOPped past its task ack wait (then SIGCONT), a NATS restart, a Redis restart, a
 * PostgreSQL pause — and per fault what the author and the ledger see:
 *
 * - one-terminal: streams that ended with exactly one terminal frame, then `done`;
 * - settled-once: runs with `billing_decision` set and exactly one settlement row;
 * - refunds-missing: runs whose ending is refundable (services/billing/src/decision.ts, from the
 *   frames the client saw) without a refund in the ledger;
 * - stuck: runs or sessions still `running` after the batch plus a settle grace;
 * - recovery p50/max: from the fault (the signal; for NATS, Redis and PostgreSQL the moment the
 *   dependency is back) to the next frame of each affected run (open at the fault, next frame
 *   ≥ 500 ms later or never);
 * - silence: the longest gap between events or heartbeats of an open stream; frame-gap: the same
 *   for frames alone (heartbeats come every AGENT_SSE_HEARTBEAT_INTERVAL_S).
 *
 * It runs its own nats-server and redis-server (restarting them touches nobody else) and puts
 * every service behind a TCP proxy to PostgreSQL. Loopback only; every loop is bounded.
 *
 *   node test/load/chaos-run-path.ts [--runs 6] [--faults none,kill-writer,…,nats,redis,pg-pause]
 *     [--at-ms 2500] [--check]
 */
import { parseArgs } from 'node:util';
import { isTerminalFrame, type SseFrame } from '@quill/contracts';
import { decideBilling, endingOf } from '../../services/billing/src/decision.ts';
import { analyzeRunOutput } from '../../services/billing/src/run-output.ts';
import { startPrivateNats, startPrivateRedis } from '../support/private-servers.ts';
import { type ClientRun, streamRun } from './support/chaos-client.ts';
import { loadAverage } from './support/proc.ts';
import { preciseNow } from './support/sse-reader.ts';
import { percentile, table } from './support/stats.ts';

const SERVICES = ['gateway', 'router', 'writer', 'reviewer', 'context', 'billing'] as const;
type Service = (typeof SERVICES)[number];
const ALL_FAULTS = [
  'none',
  ...SERVICES.map((name) => `kill-${name}`),
  ...SERVICES.map((name) => `term-${name}`),
  'stop-writer',
  'nats',
  'redis',
  'pg-pause',
];
const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '6' },
    faults: { type: 'string', default: ALL_FAULTS.join(',') },
    'at-ms': { type: 'string', default: '2500' },
    // Exit 1 when a target is missed: 100 % one terminal, 100 % settled once, 0 refunds missing, 0 stuck.
    check: { type: 'boolean', default: false },
  },
});
const RUNS = Number(values.runs);
const FAULTS = values.faults.split(',').filter(Boolean);
const AT_MS = Number(values['at-ms']);
const unknown = FAULTS.filter((fault) => !ALL_FAULTS.includes(fault));
if (unknown.length > 0)
  throw new Error(`unknown faults: ${unknown.join(', ')} (known: ${ALL_FAULTS.join(', ')})`);
const TASK_ACK_WAIT_S = 4;
/** A run whose next frame came this long after the fault counts as affected by it. */
const AFFECTED_MS = 500;
/** How long after a batch its runs may take to settle (the reconciler runs every 2 s here). */
const SETTLE_GRACE_MS = 45_000;

const nats = await startPrivateNats();
const redis = await startPrivateRedis();
// The stack reads NATS_URL and REDIS_URL when it is imported.
process.env.NATS_URL = nats.url;
process.env.REDIS_URL = redis.url;
const { startStack } = await import('../support/stack.ts');
const { startTcpProxy } = await import('../support/tcp-proxy.ts');

const stack = await startStack({
  // ~4 s per chapter body: a fault at 2.5 s lands while the first bodies stream.
  fakeLlmProcess: { tokensPerSecond: 150 },
  replicas: { gateway: 0, router: 0, writer: 0, reviewer: 0, context: 0, billing: 0 },
  env: {
    RUN_ACK_WAIT_S: '4',
    TASK_ACK_WAIT_S: String(TASK_ACK_WAIT_S),
    AGENT_RUN_WALL_CLOCK_TIMEOUT_S: '60',
    USER_MAX_CONCURRENT_RUNS: String(RUNS * 2),
    GATEWAY_RATE_LIMIT_PER_MINUTE: '100000',
    BILLING_RECONCILE_INTERVAL_S: '2',
    BILLING_RECONCILE_MIN_AGE_S: '3',
  },
});
const proxy = await startTcpProxy({
  host: '127.0.0.1',
  port: Number(new URL(stack.databaseUrl).port || 5432),
});
const dbEnv = { DATABASE_URL: proxy.urlFor(stack.databaseUrl) };
await stack.pool.query('UPDATE quota_accounts SET credits = 1000000 WHERE user_id = $1', [stack.userId]);

interface FaultResult {
  fault: string;
  runs: number;
  oneTerminal: number;
  settledOnce: number;
  refundsMissing: number;
  stuck: number;
  affected: number;
  recoveryMs: number[];
  silenceMs: number;
  frameGapMs: number;
  reconnects: number;
  terminals: Record<string, number>;
}
const results: FaultResult[] = [];
const startedAt = performance.now();
try {
  for (const name of SERVICES) await Promise.all([startReplica(name), startReplica(name)]);
  for (const [index, fault] of FAULTS.entries()) results.push(await runBatch(fault, index));
} finally {
  await stack.stop().catch(() => undefined);
  await proxy.close();
  await nats.close();
  await redis.close();
}

const ms = (value: number | undefined) => (value === undefined ? '-' : (value / 1000).toFixed(1));
const pct = (part: number, whole: number) => `${whole === 0 ? 0 : Math.round((part / whole) * 100)}%`;
console.log(
  `chaos-run-path: ${RUNS} runs per fault, 2 replicas of every service, wall ${((performance.now() - startedAt) / 1000).toFixed(0)} s, load average ${loadAverage()}`,
);
console.log(
  table([
    [
      'fault',
      'runs',
      'one-terminal',
      'settled-once',
      'refunds-missing',
      'stuck',
      'affected',
      'recovery p50/max s',
      'silence s',
      'frame-gap s',
      'terminals',
    ],
    ...results.map((result) => [
      result.fault,
      result.runs,
      pct(result.oneTerminal, result.runs),
      pct(result.settledOnce, result.runs),
      result.refundsMissing,
      result.stuck,
      result.affected,
      `${ms(result.recoveryMs.length ? percentile(result.recoveryMs, 50) : undefined)} / ${ms(result.recoveryMs.length ? Math.max(...result.recoveryMs) : undefined)}`,
      ms(result.silenceMs),
      ms(result.frameGapMs),
      JSON.stringify(result.terminals),
    ]),
  ]),
);
console.log(
  JSON.stringify({ bench: 'chaos-run-path', runs_per_fault: RUNS, load_average: loadAverage(), results }),
);
const missed = results.filter(
  (result) =>
    result.oneTerminal !== result.runs ||
    result.settledOnce !== result.runs ||
    result.refundsMissing > 0 ||
    result.stuck > 0,
);
if (values.check && missed.length > 0) {
  console.error(`chaos-run-path: targets missed under ${missed.map((result) => result.fault).join(', ')}`);
  process.exit(1);
}
process.exit(0);

function startReplica(name: Service) {
  return stack.startService(name, dbEnv);
}

function live(name: Service) {
  return stack.services.filter(
    (service) =>
      service.name === name && service.child.exitCode === null && service.child.signalCode === null,
  );
}

async function runBatch(fault: string, index: number): Promise<FaultResult> {
  let firstTerminal: () => void = () => undefined;
  const settling = new Promise<void>((resolve) => {
    firstTerminal = resolve;
  });
  const streams = Array.from({ length: RUNS }, (_, run) =>
    streamRun({
      gateways: () => stack.gateways,
      first: run,
      apiKey: stack.apiKey,
      body: { project_id: stack.projectId, message: `写《混沌${index}-${run}章》` },
      deadlineMs: 150_000,
      onFrame: (frame) => {
        if (isTerminalFrame(frame)) firstTerminal();
      },
    }),
  );
  const faultAt = await injectFault(fault, settling);
  const runs = await Promise.all(streams);
  const ids = runs.flatMap((run) => (run.runId ? [run.runId] : []));
  const rows = await settledRows(ids);
  const result: FaultResult = {
    fault,
    runs: runs.length,
    oneTerminal: 0,
    settledOnce: 0,
    refundsMissing: 0,
    stuck: 0,
    affected: 0,
    recoveryMs: [],
    silenceMs: 0,
    frameGapMs: 0,
    reconnects: 0,
    terminals: {},
  };
  for (const run of runs) {
    const frames = run.frames.map((received) => received.frame);
    const terminals = frames.filter(isTerminalFrame);
    if (terminals.length === 1 && frames.at(-1)?.type === 'done') result.oneTerminal++;
    const label = terminalLabel(terminals[0], run);
    result.terminals[label] = (result.terminals[label] ?? 0) + 1;
    result.reconnects += run.reconnects;
    const row = run.runId ? rows.get(run.runId) : undefined;
    if (row?.billing_decision && row.settlements === 1) result.settledOnce++;
    if (row && (row.phase === 'running' || row.session_phase === 'running')) result.stuck++;
    const owed = decideBilling(
      endingOf(terminals[0], { terminal: 'error', reason: 'worker_lost' }),
      analyzeRunOutput(frames),
    );
    if (row && owed.decision === 'refund' && row.refunds === 0) result.refundsMissing++;
    const recovery = recoveryOf(run, faultAt);
    if (recovery !== undefined && recovery >= AFFECTED_MS) {
      result.affected++;
      result.recoveryMs.push(recovery);
    }
    result.silenceMs = Math.max(result.silenceMs, longestGap(run.beats));
    result.frameGapMs = Math.max(result.frameGapMs, longestGap(run.frames.map((received) => received.at)));
  }
  console.log(`${fault}: ${JSON.stringify({ ...result, recoveryMs: result.recoveryMs.map(Math.round) })}`);
  return result;
}

/**
 * Injects the fault where the service has work in flight — billing as the first run settles
 * (right after its terminal frame), context while the first steps compile, the rest at `--at-ms`
 * — and resolves with the moment recovery is measured from (preciseNow).
 */
async function injectFault(fault: string, settling: Promise<void>): Promise<number> {
  const [kind, name] = fault.split('-') as [string, Service];
  if (name === 'billing') await settling;
  else await sleep(name === 'context' ? 300 : AT_MS);
  if (kind === 'kill' || kind === 'term') {
    const victim = live(name)[0];
    if (!victim) throw new Error(`no live ${name} to ${kind}`);
    const exited = new Promise((resolve) => victim.child.once('exit', resolve));
    victim.child.kill(kind === 'kill' ? 'SIGKILL' : 'SIGTERM');
    const at = preciseNow();
    // A graceful stop is bounded by the service's own shutdown timeout; this is a backstop.
    const backstop = setTimeout(() => victim.child.kill('SIGKILL'), 30_000);
    await exited;
    clearTimeout(backstop);
    await startReplica(name);
    return at;
  }
  if (fault === 'stop-writer') {
    const victim = live('writer')[0]!;
    victim.child.kill('SIGSTOP');
    const at = preciseNow();
    await sleep(TASK_ACK_WAIT_S * 1000 + 2000);
    victim.child.kill('SIGCONT');
    return at;
  }
  if (fault === 'nats' || fault === 'redis') {
    await (fault === 'nats' ? nats : redis).restart();
    return preciseNow();
  }
  if (fault === 'pg-pause') {
    proxy.pause();
    await sleep(6000);
    proxy.resume();
    return preciseNow();
  }
  return preciseNow();
}

interface SettledRow {
  phase: string;
  session_phase: string;
  billing_decision: string | null;
  settlements: number;
  refunds: number;
}

/** The runs' rows once every one is settled and none is running, or at the end of the grace. */
async function settledRows(ids: string[]): Promise<Map<string, SettledRow>> {
  const until = Date.now() + SETTLE_GRACE_MS;
  for (;;) {
    const { rows } = await stack.pool.query<SettledRow & { run_id: string }>(
      `SELECT r.run_id, r.phase, COALESCE(p.phase, 'idle') AS session_phase, r.billing_decision,
              (SELECT count(*) FROM settlements t WHERE t.run_id = r.run_id)::int AS settlements,
              (SELECT count(*) FROM billing_ledger l WHERE l.run_id = r.run_id AND l.kind = 'refund')::int AS refunds
         FROM runs r LEFT JOIN session_phases p USING (session_id) WHERE r.run_id = ANY($1)`,
      [ids],
    );
    const settled = rows.every(
      (row) => row.billing_decision && row.phase !== 'running' && row.session_phase !== 'running',
    );
    if ((settled && rows.length === ids.length) || Date.now() > until)
      return new Map(rows.map((row) => [row.run_id, row]));
    await sleep(1000);
  }
}

/** Fault → the run's next frame (or its end), for a run still open at the fault. */
function recoveryOf(run: ClientRun, faultAt: number): number | undefined {
  const done = run.frames.find((received) => received.frame.type === 'done');
  if (run.startedAt > faultAt || (done && done.at <= faultAt)) return undefined;
  const next = run.frames.find((received) => received.at > faultAt);
  return (next?.at ?? run.endedAt) - faultAt;
}

function longestGap(times: number[]): number {
  let longest = 0;
  for (let index = 1; index < times.length; index++)
    longest = Math.max(longest, times[index]! - times[index - 1]!);
  return longest;
}

function terminalLabel(value: SseFrame | undefined, run: ClientRun): string {
  if (!value) return run.frames.length === 0 ? `http ${run.status}` : 'none';
  if (value.type === 'error') return `error:${value.code}`;
  if (value.type === 'workflow_stopped') return `stopped:${value.reason}`;
  return value.type;
}

function sleep(milliseconds: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, milliseconds));
}
