import { consumeDurable, ensureRoleConsumer } from '@quill/bus';
import { type AgentRole, TaskEnvelope } from '@quill/contracts';
import { createFailoverClientFromSettings } from '@quill/llm';
import type { ServiceRuntime } from '@quill/service-kit';
import { createFlushWindow } from './flush-window.ts';
import { createRoleTaskHandler } from './role-worker.ts';

/**
 * Wires role workers into a service: one durable pull consumer per role on `task.<role>.>`, each
 * bounded to WORKER_CONCURRENCY in flight on this replica. Writer and reviewer services differ
 * only in the roles they serve and the prompts they bring.
 */
export async function startRoleWorkers(
  runtime: ServiceRuntime,
  roles: readonly AgentRole[],
  directiveFor: (task: TaskEnvelope) => string | Promise<string>,
): Promise<void> {
  const { config, bus, logger } = runtime;
  // Primary / backup with per-session pinning and a breaker shared by every replica.
  const llm = createFailoverClientFromSettings(config, { redis: runtime.redis, keys: runtime.keys, logger });
  const flushWindow = createFlushWindow({
    baseMs: config.AGENT_TEXT_FLUSH_MS,
    maxMs: config.AGENT_TEXT_FLUSH_MAX_MS,
  });
  runtime.onShutdown(async () => flushWindow.close());
  const handleTask = createRoleTaskHandler({
    bus,
    pool: runtime.pool,
    redis: runtime.redis,
    keys: runtime.keys,
    llm,
    logger,
    instanceId: config.instanceId,
    directiveFor,
    settings: {
      flushMs: config.AGENT_TEXT_FLUSH_MS,
      flushWindow,
      flushBytes: config.AGENT_TEXT_FLUSH_BYTES,
      maxToolTurns: config.AGENT_TOOL_CALL_MAX_ITERATIONS,
      heartbeatMs: config.derived.taskHeartbeatMs,
      maxOutputContinuations: config.AGENT_MAX_OUTPUT_CONTINUATIONS,
      skillTokenBudget: config.AGENT_SKILL_TOKEN_BUDGET,
      writeRetryMs: config.DATABASE_WRITE_RETRY_MS,
      drainMs: config.WORKER_DRAIN_MS,
      maxRunModelCalls: config.AGENT_RUN_MAX_MODEL_CALLS,
      modelCallCounterTtlSeconds: config.derived.modelCallCounterTtlS,
      maxRunTokens: config.AGENT_RUN_MAX_TOKENS,
    },
  });
  for (const role of roles) {
    const consumerName = await ensureRoleConsumer(bus, role, { ackWaitSeconds: config.TASK_ACK_WAIT_S });
    const consumer = await consumeDurable(bus, {
      stream: bus.names.streams.tasks,
      consumer: consumerName,
      schema: TaskEnvelope,
      concurrency: config.WORKER_CONCURRENCY,
      logger: logger.child({ role }),
      spanName: `${role} step`,
      handle: handleTask,
    });
    runtime.onShutdown(() => consumer.stop());
  }
  runtime.markReady();
  logger.info({ roles, instance: config.instanceId }, 'role workers ready');
}

/** Parses the ROLES setting against the roles a service may serve. */
export function parseRoles(value: string, allowed: readonly AgentRole[]): AgentRole[] {
  const roles = value
    .split(',')
    .map((role) => role.trim())
    .filter(Boolean);
  const unknown = roles.filter((role) => !allowed.includes(role as AgentRole));
  if (unknown.length > 0 || roles.length === 0) {
    throw new Error(`ROLES must be a non-empty subset of ${allowed.join(', ')}; got ${value}`);
  }
  return roles as AgentRole[];
}
