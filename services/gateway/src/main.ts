import { createFailoverClientFromSettings } from '@quill/llm';
import { startService } from '@quill/service-kit';
import { fastifyOtelPlugin } from '@quill/telemetry';
import { buildGatewayApp } from './app.ts';
import { createRunFeeds } from './run-feed.ts';
import { findWebDist } from './web-app.ts';

const runtime = await startService('gateway');
const { config, logger } = runtime;
const webDistDir = findWebDist(config.GATEWAY_WEB_DIST || undefined);
const app = await buildGatewayApp({
  bus: runtime.bus,
  pool: runtime.pool,
  redis: runtime.redis,
  keys: runtime.keys,
  logger,
  instanceId: config.instanceId,
  configConflicts: config.conflicts,
  runFeeds: createRunFeeds(runtime.bus),
  settings: {
    bodyLimitBytes: config.GATEWAY_BODY_LIMIT_BYTES,
    trustProxy: config.GATEWAY_TRUST_PROXY,
    heartbeatMs: config.derived.sseHeartbeatMs,
    sessionLockTtlMs: config.SESSION_LOCK_TTL_MS,
    requestTimeoutMs: config.NATS_REQUEST_TIMEOUT_MS,
    requestDeadlineMs: config.NATS_REQUEST_DEADLINE_MS,
    wallClockMs: config.derived.runWallClockMs,
    fallbackGraceMs: config.derived.gatewayFallbackGraceMs,
    disconnectGraceMs: config.derived.disconnectGraceMs,
    stopFlagTtlMs: config.derived.stopFlagTtlMs,
    steerQueueMax: config.AGENT_STEER_QUEUE_MAX,
    userMaxConcurrentRuns: config.USER_MAX_CONCURRENT_RUNS,
    rateLimitPerMinute: config.GATEWAY_RATE_LIMIT_PER_MINUTE,
    authCacheTtlMs: config.GATEWAY_AUTH_CACHE_TTL_MS,
    jwtSecret: config.AUTH_JWT_SECRET,
    jwtTtlSeconds: config.AUTH_JWT_TTL_S,
    corsOrigins: config.GATEWAY_CORS_ORIGINS,
    ...(config.AUTH_JWKS_URL
      ? {
          identityProvider: {
            jwksUrl: config.AUTH_JWKS_URL,
            issuer: config.AUTH_JWKS_ISSUER!,
            audience: config.AUTH_JWKS_AUDIENCE!,
            maxLifetimeSeconds: config.AUTH_JWKS_MAX_LIFETIME_S,
          },
        }
      : {}),
    defaultCredits: config.QUILL_DEFAULT_CREDITS,
    projectRestoreDays: config.PROJECT_RESTORE_DAYS,
    ...(webDistDir ? { webDistDir } : {}),
  },
  otelPlugin: fastifyOtelPlugin(),
  llm: createFailoverClientFromSettings(config, { redis: runtime.redis, keys: runtime.keys, logger }),
});
const address = await app.listen({ host: config.GATEWAY_HOST, port: config.GATEWAY_PORT });
runtime.onShutdown(() => app.close());
runtime.markReady();
logger.info({ address, instance: config.instanceId }, 'gateway ready');
