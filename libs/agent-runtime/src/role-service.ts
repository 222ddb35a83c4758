import { consumeDurable, ensureRoleConsumer, TASK_MAX_DELIVER } from '@quill/bus';
import { type AgentRole, RoleTaskMessage } from '@quill/contracts';
import { type RoleDefinition, withTransaction } from '@quill/db';
import { seedRoleDefinition, startRunStep } from '@quill/db/workers';
import { createFailoverClientFromSettings } from '@quill/llm';
import type { ServiceRuntime } from '@quill/service-kit';
import { toolNamesForRole } from '@quill/tools';
import type { Pool } from 'pg';
import { createBlankFilesHandler } from './blank-files.ts';
import { createFlushWindow } from './flush-window.ts';
import { composeDirective } from './protocol.ts';
import { applyDefinition, buildRoleDefinition } from './role-definition.ts';
import { createRoleTaskHandler } from './role-worker.ts';

/**
 * Wires role workers into a service: one durable pull consumer per role on `task.<role>.>`, each
 * bounded to WORKER_CONCURRENCY in flight on this replica. Writer and reviewer services differ
 * only in the roles they serve and the prompts they bring. First the definitions this build
 * carries are seeded (docs/kernel.md "Definitions and pinning"); each step then runs with its
 * session's pinned one.
 */
export async function startRoleWorkers(
  runtime: ServiceRuntime,
  roles: readonly AgentRole[],
  promptFor: (role: AgentRole) => string,
): Promise<void> {
  const { config, bus, logger } = runtime;
  const own = await seedRoleDefinitions(runtime.pool, roles, (role) =>
    buildRoleDefinition(role, promptFor(role), toolNamesForRole(role), config),
  );
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
    stepStart: async (task) => {
      const { run, pinned } = await startRunStep(runtime.pool, {
        sessionId: task.session_id,
        runId: task.run_id,
        role: task.role,
      });
      // The build's own definition when the role has none at all.
      const applied = applyDefinition(pinned?.definition ?? null, own.get(task.role)!);
      return { run, definition: { ...applied, prompt: composeDirective(applied.prompt, task) } };
    },
    settings: {
      flushMs: config.AGENT_TEXT_FLUSH_MS,
      flushWindow,
      flushBytes: config.AGENT_TEXT_FLUSH_BYTES,
      heartbeatMs: config.derived.taskHeartbeatMs,
      writeRetryMs: config.DATABASE_WRITE_RETRY_MS,
      drainMs: config.WORKER_DRAIN_MS,
      maxDeliver: TASK_MAX_DELIVER,
      requestTimeoutMs: config.NATS_REQUEST_TIMEOUT_MS,
      requestDeadlineMs: config.NATS_REQUEST_DEADLINE_MS,
      maxRunModelCalls: config.AGENT_RUN_MAX_MODEL_CALLS,
      modelCallCounterTtlSeconds: config.derived.modelCallCounterTtlS,
      maxRunTokens: config.AGENT_RUN_MAX_TOKENS,
    },
  });
  // The writer's queue also carries the blank files of ended runs (round-outcome in the router).
  const handleBlankFiles = createBlankFilesHandler({
    pool: runtime.pool,
    logger,
    writeRetryMs: config.DATABASE_WRITE_RETRY_MS,
    maxDeliver: TASK_MAX_DELIVER,
  });
  for (const role of roles) {
    const consumerName = await ensureRoleConsumer(bus, role, {
      ackWaitSeconds: config.TASK_ACK_WAIT_S,
      maxDeliver: TASK_MAX_DELIVER,
    });
    const consumer = await consumeDurable(bus, {
      stream: bus.names.streams.tasks,
      consumer: consumerName,
      schema: RoleTaskMessage,
      concurrency: config.WORKER_CONCURRENCY,
      logger: logger.child({ role }),
      spanName: `${role} step`,
      handle: (message, delivery) =>
        'kind' in message ? handleBlankFiles(message, delivery) : handleTask(message, delivery),
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

/** At start-up: the definitions this build carries, recorded as versions by content hash. */
async function seedRoleDefinitions(
  pool: Pool,
  roles: readonly AgentRole[],
  build: (role: AgentRole) => RoleDefinition,
): Promise<Map<AgentRole, RoleDefinition>> {
  const own = new Map<AgentRole, RoleDefinition>();
  for (const role of roles) {
    const definition = build(role);
    await withTransaction(pool, (client) => seedRoleDefinition(client, role, definition));
    own.set(role, definition);
  }
  return own;
}
