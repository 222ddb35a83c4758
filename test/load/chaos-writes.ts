/**
 * Chaos on the write path (docs/ai-writes.md): batches of concurrent chapter-writing runs on two
 * replicas of every service, one batch per fault — none, author edits during writing, writers cut
 * off from Postgres (connections reset), Postgres hanging (connections frozen), a NATS restart, a
 * writer killed — and per fault what an author would count:
 * author texts overwritten, chapters lost, chapters saved twice, runs charged for a platform
 * fault, and runs that did not end with exactly one terminal frame then `done`.
 *
 * It starts its own nats-server (so restarting it touches nobody else) and puts the writers
 * behind a TCP proxy to Postgres. Loopback only; every loop is bounded.
 *
 *   node test/load/chaos-writes.ts [--runs 12] [--faults none,author,pg,pg-pause,nats,kill] [--check]
 */
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { isTerminalFrame, type SseFrame } from '@quill/contracts';
import { startPrivateNats } from '../support/private-servers.ts';

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '12' },
    faults: { type: 'string', default: 'none,author,pg,pg-pause,nats,kill' },
    // Exit 1 when any author-facing count is off target (for a short run in CI).
    check: { type: 'boolean', default: false },
  },
});
const RUNS = Number(values.runs);
const FAULTS = values.faults.split(',').filter(Boolean);
const PLATFORM_ERRORS = new Set([
  'internal_error',
  'storage_unavailable',
  'worker_lost',
  'context_unavailable',
  'invalid_bus_message',
  'service_unavailable',
]);

const nats = await startPrivateNats();
process.env.NATS_URL = nats.url;
// The stack reads NATS_URL when it is imported.
const { startStack } = await import('../support/stack.ts');
const { startTcpProxy } = await import('../support/tcp-proxy.ts');
const { readStream, startRun } = await import('../support/sse-client.ts');
const { listFiles, listFileVersions, getRun } = await import('@quill/db');

// A start that fails part-way must leave nothing behind: not the stack, not the nats-server.
let starting: Awaited<ReturnType<typeof startStack>> | undefined;
const started = await (async () => {
  try {
    const stack = await startStack({
      // ~4 s per chapter body: long enough for a fault to land in the middle of the writing.
      fakeLlmProcess: { tokensPerSecond: 150 },
      replicas: { gateway: 2, router: 2, writer: 0, context: 2, billing: 2 },
      env: {
        RUN_ACK_WAIT_S: '4',
        TASK_ACK_WAIT_S: '4',
        AGENT_RUN_WALL_CLOCK_TIMEOUT_S: '90',
        USER_MAX_CONCURRENT_RUNS: String(RUNS),
        GATEWAY_RATE_LIMIT_PER_MINUTE: '100000',
        DATABASE_WRITE_RETRY_MS: '30000',
      },
    });
    starting = stack;
    const proxy = await startTcpProxy({
      host: '127.0.0.1',
      port: Number(new URL(stack.databaseUrl).port || 5432),
    });
    const writerEnv = { DATABASE_URL: proxy.urlFor(stack.databaseUrl) };
    await Promise.all([stack.startService('writer', writerEnv), stack.startService('writer', writerEnv)]);
    return { stack, proxy, writerEnv };
  } catch (error) {
    await starting?.stop().catch(() => undefined);
    await nats.close();
    throw error;
  }
})();
const { stack, proxy, writerEnv } = started;

interface Outcome {
  fault: string;
  runs: number;
  oneTerminal: number;
  authorOverwritten: number;
  chaptersLost: number;
  savedTwice: number;
  chargedForPlatformFault: number;
  /** Writer model calls beyond the two a chapter takes (create_file, then the body): paid twice. */
  extraModelCalls: number;
  terminals: Record<string, number>;
  /** Evidence that the fault landed: author saves that went in, drafts made, steps taken over, refused DB connections. */
  evidence: {
    authorSaves: number;
    drafts: number;
    stepsResumed: number;
    dbRefusals: number;
    dbFrozen: number;
  };
}
const outcomes: Outcome[] = [];
let frozenConnections = 0;
const startedAt = performance.now();
let batch = 0;
try {
  for (const fault of FAULTS) outcomes.push(await runBatch(fault, ++batch));
} finally {
  await stack.stop().catch(() => undefined);
  await proxy.close();
  await nats.close();
}

console.log(
  `chaos-writes: ${RUNS} runs per fault, wall ${((performance.now() - startedAt) / 1000).toFixed(0)} s, load average ${loadavg()
    .map((value) => value.toFixed(2))
    .join(' ')}`,
);
const header = [
  'runs',
  'one-terminal',
  'author-overwritten',
  'chapters-lost',
  'saved-twice',
  'charged-for-platform-fault',
  'extra-model-calls',
];
console.log(`${'fault'.padEnd(8)} ${header.join('  ')} | evidence the fault landed`);
for (const outcome of outcomes) {
  const cells = [
    outcome.runs,
    outcome.oneTerminal,
    outcome.authorOverwritten,
    outcome.chaptersLost,
    outcome.savedTwice,
    outcome.chargedForPlatformFault,
    outcome.extraModelCalls,
  ].map((cell, index) => String(cell).padStart(header[index]!.length));
  console.log(
    `${outcome.fault.padEnd(8)} ${cells.join('  ')} | ${JSON.stringify(outcome.evidence)} ${JSON.stringify(outcome.terminals)}`,
  );
}
console.log(JSON.stringify({ bench: 'chaos-writes', runs_per_fault: RUNS, outcomes }));
const offTarget = outcomes.filter(
  (outcome) =>
    outcome.oneTerminal !== outcome.runs ||
    outcome.authorOverwritten + outcome.chaptersLost + outcome.savedTwice + outcome.chargedForPlatformFault >
      0,
);
if (values.check && offTarget.length > 0) {
  console.error(`chaos-writes: off target under ${offTarget.map((outcome) => outcome.fault).join(', ')}`);
  process.exit(1);
}
process.exit(0);

async function runBatch(fault: string, index: number): Promise<Outcome> {
  // The fake's default writer names its file after the 《title》 in the request: one file per run.
  const titles = Array.from({ length: RUNS }, (_, run) => `混沌${index}-${run}章`);
  const authorTexts = new Map<string, string>();
  const runs = titles.map(async (title, run) => {
    const gateway = stack.gateways[run % stack.gateways.length]!;
    const response = await startRun(gateway, stack.apiKey, {
      project_id: stack.projectId,
      message: `写《${title}》`,
    });
    let edited = false;
    const result = await readStream(response, {
      onFrame: (received) => {
        // The author opens the chapter as soon as it streams and saves their own text over it.
        if (fault !== 'author' || edited || run % 2 === 1 || received.frame.type !== 'file_start') return;
        edited = true;
        const text = `作者自己的${title}。`;
        authorTexts.set(title, text);
        void fetch(`${gateway}/api/v1/projects/${stack.projectId}/files/${received.frame.file_id}`, {
          method: 'PUT',
          headers: { authorization: `Bearer ${stack.apiKey}`, 'content-type': 'application/json' },
          body: JSON.stringify({ content: text, expected_version: 0 }),
        }).then((saved) => {
          if (saved.status !== 200) authorTexts.delete(title);
        });
      },
    });
    return {
      title,
      frames: result.frames.map((received) => received.frame),
      runId: response.headers.get('x-quill-run-id'),
    };
  });
  const refusedBefore = proxy.attemptsWhileCut;
  const injected = injectFault(fault);
  const results = await Promise.all(runs);
  await injected;
  // Let settlements land before they are counted.
  await new Promise((resolve) => setTimeout(resolve, 2000));

  const files = await listFiles(stack.pool, stack.projectId);
  const outcome: Outcome = {
    fault,
    runs: results.length,
    oneTerminal: 0,
    authorOverwritten: 0,
    chaptersLost: 0,
    savedTwice: 0,
    chargedForPlatformFault: 0,
    extraModelCalls: 0,
    terminals: {},
    evidence: {
      authorSaves: authorTexts.size,
      drafts: 0,
      stepsResumed: 0,
      dbRefusals: proxy.attemptsWhileCut - refusedBefore,
      dbFrozen: fault === 'pg-pause' ? frozenConnections : 0,
    },
  };
  for (const { title, frames, runId } of results) {
    const terminals = frames.filter(isTerminalFrame);
    if (terminals.length === 1 && frames.at(-1)?.type === 'done') outcome.oneTerminal++;
    const label = terminalLabel(terminals[0]);
    outcome.terminals[label] = (outcome.terminals[label] ?? 0) + 1;
    const chapter = files.find((file) => file.title === title);
    const drafts = files.filter((file) => chapter && file.draftOf === chapter.id);
    outcome.evidence.drafts += drafts.length;
    outcome.evidence.stepsResumed += frames.filter((value) => value.type === 'step_resumed').length;
    const aiVersions = (
      await Promise.all(
        [chapter, ...drafts]
          .filter((file) => file !== undefined)
          .map((file) => listFileVersions(stack.pool, file.id)),
      )
    )
      .flat()
      .filter((version) => version.source === 'ai');
    const authorText = authorTexts.get(title);
    if (authorText !== undefined && chapter?.content !== authorText) outcome.authorOverwritten++;
    const hasBody = aiVersions.some((version) => version.content.length > 0);
    // The author asked for a chapter: whatever the run's ending, its text must be somewhere.
    if (!hasBody) outcome.chaptersLost++;
    const bodies = aiVersions
      .filter((version) => version.partialReason === null)
      .map((version) => version.content);
    if (new Set(bodies).size < bodies.length) outcome.savedTwice++;
    if (runId) {
      const calls = await stack.fakeLlmProcess!.requests({ run_id: runId, role: 'writer' });
      outcome.extraModelCalls += Math.max(0, calls.length - 2);
    }
    const record = runId ? await getRun(stack.pool, runId) : null;
    const code = terminals[0]?.type === 'error' ? terminals[0].code : undefined;
    if (code && PLATFORM_ERRORS.has(code) && record?.billingDecision === 'charge')
      outcome.chargedForPlatformFault++;
  }
  return outcome;
}

async function injectFault(fault: string): Promise<void> {
  // Half-way into the first bodies: runs start, route, create their files, then stream.
  await new Promise((resolve) => setTimeout(resolve, 2500));
  if (fault === 'pg') {
    proxy.cut();
    await new Promise((resolve) => setTimeout(resolve, 6000));
    proxy.restore();
  } else if (fault === 'pg-pause') {
    frozenConnections = proxy.connections;
    proxy.pause();
    await new Promise((resolve) => setTimeout(resolve, 6000));
    proxy.resume();
  } else if (fault === 'nats') {
    await nats.restart();
  } else if (fault === 'kill') {
    const victim = stack.services.find(
      (service) => service.name === 'writer' && service.child.exitCode === null,
    );
    if (victim) {
      victim.child.kill('SIGKILL');
      await stack.startService('writer', writerEnv);
    }
  }
}

function terminalLabel(value: SseFrame | undefined): string {
  if (!value) return 'none';
  if (value.type === 'error') return `error:${value.code}`;
  if (value.type === 'workflow_stopped') return `stopped:${value.reason}`;
  return value.type;
}
