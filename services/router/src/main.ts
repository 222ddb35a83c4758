import { consumeDurable, publishFrame, runIdFromSubject } from '@quill/bus';
import { errorFrame, frame, msgIds, RunStartEnvelope } from '@quill/contracts';
import { startService } from '@quill/service-kit';
import { createRunHandler } from './run-orchestrator.ts';

const runtime = await startService('router');
const { config, bus, logger } = runtime;

const handleRunStart = createRunHandler({
  bus,
  pool: runtime.pool,
  redis: runtime.redis,
  keys: runtime.keys,
  logger,
  requestTimeoutMs: config.NATS_REQUEST_TIMEOUT_MS,
  settings: {
    maxIterations: config.AGENT_COLLABORATION_MAX_ITERATIONS,
    wallClockMs: config.AGENT_RUN_WALL_CLOCK_TIMEOUT_S * 1000,
    heartbeatMs: Math.max(1000, (config.RUN_ACK_WAIT_S * 1000) / 3),
    sessionLockTtlMs: config.SESSION_LOCK_TTL_MS,
  },
});

const consumer = await consumeDurable(bus, {
  stream: bus.names.streams.runs,
  consumer: bus.names.consumers.router,
  schema: RunStartEnvelope,
  concurrency: config.ROUTER_CONCURRENCY,
  logger,
  spanName: 'router run',
  handle: handleRunStart,
  async onInvalid(subject) {
    const runId = runIdFromSubject(subject);
    if (!runId) return;
    await publishFrame(bus, errorFrame(runId, 'invalid_bus_message'), { msgId: msgIds.terminal(runId) });
    await publishFrame(bus, frame('done', runId, {}), { msgId: msgIds.done(runId) });
  },
});
runtime.onShutdown(() => consumer.stop());
logger.info({ instance: config.instanceId }, 'router ready');
