import { startService } from '@quill/service-kit';
import { fastifyOtelPlugin } from '@quill/telemetry';
import { buildGatewayApp } from './app.ts';

const runtime = await startService('gateway');
const { config, logger } = runtime;
const app = await buildGatewayApp({
  bus: runtime.bus,
  pool: runtime.pool,
  redis: runtime.redis,
  keys: runtime.keys,
  logger,
  instanceId: config.instanceId,
  configConflicts: config.conflicts,
  settings: {
    bodyLimitBytes: config.GATEWAY_BODY_LIMIT_BYTES,
    trustProxy: config.GATEWAY_TRUST_PROXY,
    heartbeatMs: config.AGENT_SSE_HEARTBEAT_INTERVAL_S * 1000,
    sessionLockTtlMs: config.SESSION_LOCK_TTL_MS,
    requestTimeoutMs: config.NATS_REQUEST_TIMEOUT_MS,
  },
  otelPlugin: fastifyOtelPlugin(),
});
const address = await app.listen({ host: config.GATEWAY_HOST, port: config.GATEWAY_PORT });
runtime.onShutdown(() => app.close());
logger.info({ address, instance: config.instanceId }, 'gateway ready');
