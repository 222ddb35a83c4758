import { consumeDurable, publishFrame, runIdFromSubject } from '@quill/bus';
import { errorFrame, frame, msgIds, RunStartEnvelope } from '@quill/contracts';
import { createFailoverClientFromSettings } from '@quill/llm';
import { startService } from '@quill/service-kit';
import { createPhaseWriter } from './phases/phase-writer.ts';
import { serveRunAdmission } from './phases/run-admission.ts';
import { createRunSweep } from './phases/run-sweep.ts';
import { createRunKeepAlive } from './run-keep-alive.ts';
import { createRunLeases } from './run-leases.ts';
import { countActiveRuns } from './run-metrics.ts';
import { createRunHandler } from './run-orchestrator.ts';
import { MAX_REVIEW_ROUNDS } from './workflow/workflow-plan.ts';
import { createWorkflowRuntime } from './workflow/workflow-runtime.ts';

const runtime = await startService('router');
const { config, bus, logger } = runtime;
// The only writer of run and session phases (docs/architecture.md "Phases").
const phases = createPhaseWriter(runtime.pool, logger);

const workflow = createWorkflowRuntime({
  bus,
  pool: runtime.pool,
  // The router model goes through the same primary/backup failover as the workers.
  llm: createFailoverClientFromSettings(config, { redis: runtime.redis, keys: runtime.keys, logger }),
  strategy: config.AGENT_ROUTER_STRATEGY,
  phases,
  maxIterations: config.AGENT_COLLABORATION_MAX_ITERATIONS,
  settings: {
    autoReviewThresholdChars: config.AGENT_AUTO_REVIEW_THRESHOLD_CHARS,
    maxReviewRounds: MAX_REVIEW_ROUNDS,
  },
});

const leases = createRunLeases(
  { bus, redis: runtime.redis, keys: runtime.keys, logger },
  {
    ttlMs: config.ROUTER_RUN_LEASE_TTL_MS,
    scanMs: config.derived.routerLeaseScanMs,
  },
);

const keepAlive = createRunKeepAlive(
  { redis: runtime.redis, keys: runtime.keys, logger },
  { intervalMs: config.derived.runKeepAliveMs, ttlMs: config.SESSION_LOCK_TTL_MS },
);

const handleRunStart = createRunHandler({
  bus,
  workflow,
  leases,
  keepAlive,
  phases,
  pool: runtime.pool,
  redis: runtime.redis,
  keys: runtime.keys,
  logger,
  requestTimeoutMs: config.NATS_REQUEST_TIMEOUT_MS,
  requestDeadlineMs: config.NATS_REQUEST_DEADLINE_MS,
  settings: {
    maxIterations: config.AGENT_COLLABORATION_MAX_ITERATIONS,
    wallClockMs: config.derived.runWallClockMs,
    stopGraceMs: config.derived.stopGraceMs,
    stopFlagTtlMs: config.derived.stopFlagTtlMs,
  },
});

const consumer = await consumeDurable(bus, {
  stream: bus.names.streams.runs,
  consumer: bus.names.consumers.router,
  schema: RunStartEnvelope,
  concurrency: config.ROUTER_CONCURRENCY,
  logger,
  spanName: 'router run',
  handle: countActiveRuns(handleRunStart),
  async onInvalid(subject) {
    const runId = runIdFromSubject(subject);
    if (!runId) return;
    await publishFrame(bus, errorFrame(runId, 'invalid_bus_message'), { msgId: msgIds.terminal(runId) });
    await publishFrame(bus, frame('done', runId, {}), { msgId: msgIds.done(runId) });
  },
});
const admission = serveRunAdmission({ bus, pool: runtime.pool, logger, phases });
const sweep = createRunSweep(
  { bus, pool: runtime.pool, logger, phases },
  {
    intervalMs: config.ROUTER_RECONCILE_INTERVAL_S * 1000,
    minAgeSeconds: config.ROUTER_RECONCILE_MIN_AGE_S,
    // After the router's wall clock and the gateway's own last resort have had their turn.
    abandonedAfterSeconds: config.AGENT_RUN_WALL_CLOCK_TIMEOUT_S + config.AGENT_STOP_GRACE_S + 60,
    batch: 100,
  },
);
sweep.start();
runtime.onShutdown(async () => {
  leases.stop();
  keepAlive.stop();
  await Promise.all([consumer.stop(), admission.stop(), sweep.stop()]);
});
runtime.markReady();
logger.info({ instance: config.instanceId }, 'router ready');
