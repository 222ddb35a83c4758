/**
 * Failover latency: what a failover adds to a model call, measured as the time from the
 * primary's failure (the moment its attempt is reported failed) to the backup's first token, over
 * N calls per failure kind, against two local fake providers and the real Redis (breaker + pin).
 * The breaker is set never to open, so every call fails over. Prints a table and one JSON line.
 *
 *   node test/load/failover-latency.ts [--calls 200] [--redis redis://127.0.0.1:6379]
 */
import { parseArgs } from 'node:util';
import { startFakeLlm } from '@quill/fake-llm';
import { collectChat, createFailoverClient, type LlmProvider } from '@quill/llm';
import { createRedis, redisKeys } from '@quill/redis';
import { uniqueName } from '../support/urls.ts';

const { values } = parseArgs({
  options: {
    calls: { type: 'string', default: '200' },
    redis: { type: 'string', default: 'redis://127.0.0.1:6379' },
  },
});
const calls = Number(values.calls);

const primary = await startFakeLlm({ port: 0 });
const backup = await startFakeLlm({ port: 0, model: 'quill-fake-backup' });
const closedPort = await startFakeLlm({ port: 0 });
await closedPort.close();
const redis = createRedis(values.redis);
const keys = redisKeys(uniqueName('quill_bench_failover_'));
const provider = (name: string, baseUrl: string): LlmProvider => ({
  name,
  baseUrl,
  apiKey: 'bench',
  model: 'quill-fake-1',
  maxInputTokens: 128_000,
});

const FIRST_TOKEN_TIMEOUT_MS = 200;
// One client per primary URL, built once, as a service does (keep-alive connections reused).
const clients = new Map<string, ReturnType<typeof createFailoverClient>>();
const client = (primaryUrl: string) => {
  let found = clients.get(primaryUrl);
  if (!found) {
    found = buildClient(primaryUrl);
    clients.set(primaryUrl, found);
  }
  return found;
};
const buildClient = (primaryUrl: string) =>
  createFailoverClient({
    providers: [provider('primary', primaryUrl), provider('backup', backup.url)],
    redis,
    keys,
    timeouts: { connectMs: 5_000, firstTokenMs: FIRST_TOKEN_TIMEOUT_MS, idleMs: 5_000 },
    breaker: { failureThreshold: 1_000_000, windowMs: 60_000, cooldownMs: 1_000, probeLeaseMs: 1_000 },
    pinTtlMs: 60_000,
  });

interface Scenario {
  name: string;
  primaryUrl: string;
  /** Scripts the primary's failure for one call. */
  prepare(runId: string): void;
}

const scenarios: Scenario[] = [
  {
    name: 'http_500',
    primaryUrl: primary.url,
    prepare: (runId) =>
      primary.addScript({ match: { run_id: runId }, responses: [{ error: { status: 500 } }] }),
  },
  {
    name: 'http_429',
    primaryUrl: primary.url,
    prepare: (runId) =>
      primary.addScript({ match: { run_id: runId }, responses: [{ error: { status: 429 } }] }),
  },
  { name: 'connection_refused', primaryUrl: closedPort.url, prepare: () => undefined },
  {
    name: `first_token_timeout_${FIRST_TOKEN_TIMEOUT_MS}ms`,
    primaryUrl: primary.url,
    prepare: (runId) =>
      primary.addScript({ match: { run_id: runId }, responses: [{ text: '太迟了', ttft_ms: 5_000 }] }),
  },
];

/** One call: ms from the primary's failure to the backup's first token, and the whole call. */
async function measure(scenario: Scenario, index: number) {
  const runId = `bench-${scenario.name}-${index}`;
  scenario.prepare(runId);
  const startedAt = performance.now();
  let failedAt: number | undefined;
  let firstTokenAt: number | undefined;
  const result = await collectChat(
    client(scenario.primaryUrl).streamChat({
      messages: [{ role: 'user', content: '你好' }],
      role: 'quality_reviewer',
      runId,
      onAttempt: (attempt) => {
        if (attempt.outcome === 'failed') failedAt ??= performance.now();
      },
    }),
    (event) => {
      if (event.type === 'text') firstTokenAt ??= performance.now();
    },
  );
  if (result.provider !== 'backup' || failedAt === undefined || firstTokenAt === undefined) {
    throw new Error(`call ${runId} did not fail over (served by ${result.provider})`);
  }
  return { added: firstTokenAt - failedAt, total: firstTokenAt - startedAt };
}

/** The backup alone, for comparison: its own time to first token. */
async function baseline(index: number) {
  const startedAt = performance.now();
  let firstTokenAt = 0;
  await collectChat(
    client(backup.url).streamChat({
      messages: [{ role: 'user', content: '你好' }],
      role: 'quality_reviewer',
      runId: `bench-baseline-${index}`,
    }),
    (event) => {
      if (event.type === 'text' && firstTokenAt === 0) firstTokenAt = performance.now();
    },
  );
  return firstTokenAt - startedAt;
}

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
const summary = (samples: number[]) => {
  const sorted = [...samples].sort((a, b) => a - b);
  return {
    p50: Number(percentile(sorted, 50).toFixed(2)),
    p95: Number(percentile(sorted, 95).toFixed(2)),
    max: Number(sorted.at(-1)!.toFixed(2)),
  };
};

const report: Record<string, unknown> = { calls };
try {
  // Warm-up: connection pools, the Lua scripts' cache, the tokenizer tables.
  for (let index = 0; index < 10; index++) await baseline(-index - 1);
  const baselines: number[] = [];
  for (let index = 0; index < calls; index++) baselines.push(await baseline(index));
  const baselineSummary = summary(baselines);
  report.backup_alone_ttft_ms = baselineSummary;
  console.log(
    `${'backup alone (no failover)'.padEnd(28)} call start→first token   p50 ${baselineSummary.p50} ms  p95 ${baselineSummary.p95} ms`,
  );
  for (const scenario of scenarios) {
    const added: number[] = [];
    const total: number[] = [];
    for (let index = 0; index < calls; index++) {
      const sample = await measure(scenario, index);
      added.push(sample.added);
      total.push(sample.total);
    }
    const addedSummary = summary(added);
    const totalSummary = summary(total);
    report[scenario.name] = {
      failure_to_backup_first_token_ms: addedSummary,
      call_to_first_token_ms: totalSummary,
    };
    console.log(
      `${scenario.name.padEnd(28)} failure→backup first token p50 ${addedSummary.p50} ms  p95 ${addedSummary.p95} ms` +
        `   (call start→first token p50 ${totalSummary.p50} ms  p95 ${totalSummary.p95} ms)`,
    );
  }
  console.log(JSON.stringify({ benchmark: 'failover-latency', ...report }));
} finally {
  const found = await redis.keys(`${keys.prefix}*`);
  if (found.length > 0) await redis.del(...found);
  await redis.quit();
  await Promise.all([primary.close(), backup.close()]);
}
