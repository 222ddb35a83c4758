import { type Bus, connectBus, consumerLag, ensureStreams, retryWithBackoff } from '@quill/bus';
import { type Config, loadConfig, type SecretUse } from '@quill/config';
import { createPool } from '@quill/db';
import { createRedis, type RedisClient, type RedisKeys, redisKeys } from '@quill/redis';
import { asyncGauges, createLogger, quillMetrics, shutdownTelemetry } from '@quill/telemetry';
import type { Pool } from 'pg';
import type { Logger } from 'pino';
import { startIdleMemoryReducer } from './idle-memory.ts';
import { type OpsServer, startOpsServer } from './ops-server.ts';
import { installShutdown } from './shutdown.ts';

export interface ServiceRuntime {
  readonly config: Config;
  readonly logger: Logger;
  readonly bus: Bus;
  readonly pool: Pool;
  readonly redis: RedisClient;
  readonly keys: RedisKeys;
  /** Registers work to stop first (consumers, servers), before connections close. */
  onShutdown(stop: () => Promise<void>): void;
  /** The health + metrics port (`/livez`, `/readyz`, `/metrics`). */
  readonly ops: OpsServer;
  /** Makes `/readyz` answer 200: call once the handlers are wired. */
  markReady(): void;
}

/**
 * The secrets each service uses, checked in production before anything connects (libs/config
 * secrets.ts): only the gateway signs tokens; every service that calls a model needs its keys.
 * An unknown service name is held to all of them.
 */
const SECRETS_BY_SERVICE: Record<string, readonly SecretUse[]> = {
  gateway: ['auth', 'llm'],
  router: ['llm'],
  writer: ['llm'],
  reviewer: ['llm'],
  context: ['llm'],
  billing: [],
};

/**
 * The connections every service needs, from one config read. Each `main.ts` calls this, wires
 * its handlers, and leaves shutdown ordering here: service work first, then NATS drain, then
 * pools, then the trace flush.
 */
export async function startService(service: string): Promise<ServiceRuntime> {
  const config = loadConfig({ secrets: SECRETS_BY_SERVICE[service] ?? ['auth', 'llm'] });
  const logger = createLogger({ service, level: config.LOG_LEVEL, instanceId: config.instanceId });
  for (const conflict of config.conflicts) {
    // Not `key`: the logger redacts fields by that name, and the key name is the whole point of
    // the warning (docs/agent-behaviour.md 坑 1). The value is already masked.
    const { key, ...rest } = conflict;
    logger.warn({ config_key: key, ...rest }, 'config set differently in .env and the process environment');
  }
  const stopIdleMemoryReducer = startIdleMemoryReducerIfOn(config, logger);
  // First, so probes see a live (not yet ready) process while dependencies are waited for.
  const ops = await startOpsServer({
    host: config.OPS_HOST,
    port: config.OPS_PORT,
    readyGraceMs: config.derived.opsReadyGraceMs,
    logger,
  });
  // Every dependency is waited for (with backoff, each attempt logged) rather than exiting: a
  // replica that starts before its broker or database, or CPU-starved while the fleet scales
  // out, would otherwise crash-loop (README "Fault tolerance").
  const bus = await connectBus({
    url: config.NATS_URL,
    namespace: config.QUILL_BUS_NAMESPACE,
    name: `${service}:${config.instanceId}`,
    logger,
    publishRetry: {
      ackTimeoutMs: config.NATS_PUBLISH_ACK_TIMEOUT_MS,
      deadlineMs: config.NATS_PUBLISH_RETRY_MS,
    },
  });
  await ensureStreams(bus, config.derived.streams);
  watchBusStatus(bus, ops);
  observeConsumerLag(bus);
  const pool = createPool(config.DATABASE_URL, {
    max: config.DATABASE_POOL_MAX,
    min: config.DATABASE_POOL_MIN,
    idleTimeoutMs: config.DATABASE_POOL_IDLE_S * 1000,
    preparedStatements: config.DATABASE_PREPARED_STATEMENTS,
  });
  const redis = createRedis(config.REDIS_URL, {
    onError: (error) => logger.warn({ err: error }, 'redis connection error'),
  });
  await Promise.all([
    retryWithBackoff(() => pool.query('SELECT 1'), { what: 'PostgreSQL', logger }),
    retryWithBackoff(() => redis.ping(), { what: 'Redis', logger }),
  ]);
  const stoppers: Array<() => Promise<void>> = [];
  installShutdown({
    logger,
    timeoutMs: config.SHUTDOWN_TIMEOUT_MS,
    async stop() {
      ops.state.draining = true;
      stopIdleMemoryReducer();
      for (const stop of stoppers.reverse())
        await stop().catch((error: unknown) => logger.error({ err: error }, 'stop failed'));
      await bus.close();
      await Promise.allSettled([pool.end(), redis.quit()]);
      await ops.close();
      await shutdownTelemetry();
    },
  });
  return {
    config,
    logger,
    bus,
    pool,
    redis,
    keys: redisKeys(config.QUILL_REDIS_PREFIX),
    onShutdown: (stop) => stoppers.push(stop),
    ops,
    markReady: () => {
      ops.state.started = true;
    },
  };
}

/** Memory given back once per quiet spell (`MEMORY_IDLE_REDUCE_S`, 0 = off), each time logged. */
function startIdleMemoryReducerIfOn(config: Config, logger: Logger): () => void {
  if (config.MEMORY_IDLE_REDUCE_S === 0) return () => undefined;
  const mb = (bytes: number) => Math.round(bytes / 2 ** 20);
  return startIdleMemoryReducer({
    quietAfterMs: config.MEMORY_IDLE_REDUCE_S * 1000,
    onReduced: (reduction) => {
      quillMetrics().memoryIdleReductionPause.record(reduction.pauseMs / 1000);
      logger.info(
        {
          rss_before_mb: mb(reduction.rssBeforeBytes),
          rss_after_mb: mb(reduction.rssAfterBytes),
          heap_before_mb: mb(reduction.heapBeforeBytes),
          heap_after_mb: mb(reduction.heapAfterBytes),
          pause_ms: Math.round(reduction.pauseMs),
        },
        'idle: memory given back',
      );
    },
  });
}

/** Records since when NATS has been unreachable, for `/readyz` (docs/operations.md "Probes"). */
function watchBusStatus(bus: Bus, ops: OpsServer): void {
  void (async () => {
    for await (const status of bus.connection.status()) {
      if (status.type === 'disconnect') ops.state.busDownSince ??= Date.now();
      else if (status.type === 'reconnect') ops.state.busDownSince = undefined;
    }
  })().catch(() => undefined);
}

/** JetStream lag of the consumers this process pulls, read at each scrape. */
function observeConsumerLag(bus: Bus): void {
  asyncGauges(
    {
      pending: 'quill.jetstream.consumer.pending',
      ackPending: 'quill.jetstream.consumer.ack_pending',
      redelivered: 'quill.jetstream.consumer.redelivered',
    },
    async () =>
      (await consumerLag(bus)).map((lag) => ({
        values: { pending: lag.pending, ackPending: lag.ackPending, redelivered: lag.redelivered },
        attributes: { stream: lag.stream, consumer: lag.consumer },
      })),
  );
}
