import type { Bus } from '@quill/bus';
import type { ConfigConflict } from '@quill/config';
import type { FailoverLlmClient } from '@quill/llm';
import type { RedisClient, RedisKeys } from '@quill/redis';
import type { FastifyOtelPlugin } from '@quill/telemetry';
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { Pool } from 'pg';
import type { Logger } from 'pino';
import { createAuthenticator } from './auth.ts';
import { installCors } from './cors.ts';
import { createCredentialCache } from './credential-cache.ts';
import { frameworkErrorOptions } from './framework-errors.ts';
import { createHeartbeats } from './heartbeats.ts';
import { installErrorHandler } from './http-errors.ts';
import { createIdentityProvider, type IdentityProviderSettings } from './identity-provider.ts';
import { createMethodIndex } from './method-index.ts';
import { installRateLimit } from './rate-limit.ts';
import { registerAccountRoutes } from './routes/accounts.ts';
import { registerAgentRoutes } from './routes/agent.ts';
import { registerAgentControlRoutes } from './routes/agent-control.ts';
import { registerArtifactRoutes } from './routes/artifacts.ts';
import { registerBillingRoutes } from './routes/billing.ts';
import { registerBranchRoutes } from './routes/branches.ts';
import { registerContextTraceRoutes } from './routes/context-trace.ts';
import { registerDefinitionRoutes } from './routes/definitions.ts';
import { registerFileVisibilityRoutes } from './routes/file-visibility.ts';
import { registerFileRoutes } from './routes/files.ts';
import { registerHealthRoutes } from './routes/health.ts';
import { registerMemberRoutes } from './routes/members.ts';
import { registerOpenApiRoute } from './routes/openapi.ts';
import { registerProjectStateRoutes } from './routes/project-state.ts';
import { projectTransferRoutes } from './routes/project-transfer.ts';
import { registerProjectRoutes } from './routes/projects.ts';
import { registerRunRoutes } from './routes/runs.ts';
import { registerSessionRoutes } from './routes/sessions.ts';
import { skillRoutes } from './routes/skills.ts';
import { registerSnapshotRoutes } from './routes/snapshots.ts';
import { registerSuggestRoutes } from './routes/suggest.ts';
import { registerTokenRoutes } from './routes/tokens.ts';
import type { RunFeeds } from './run-feed.ts';
import { createRunWatch } from './run-watch.ts';
import { installSteerTelemetry } from './steer-telemetry.ts';
import { createStreamTickets } from './stream-tickets.ts';
import { createTokenService } from './tokens.ts';
import { installUnreadBodyDrain } from './unread-body.ts';
import { installWebApp } from './web-app.ts';

declare module 'fastify' {
  interface FastifyInstance {
    /** Every route this gateway serves (the OpenAPI test compares them with the route table). */
    registeredRoutes(): Array<{ method: string; url: string }>;
  }
}

/** What a client waits before reconnecting when this gateway shuts down (another one answers). */
const SHUTDOWN_RECONNECT_MS = 500;

export interface GatewayDependencies {
  bus: Bus;
  pool: Pool;
  redis: RedisClient;
  keys: RedisKeys;
  logger: Logger;
  instanceId: string;
  configConflicts: readonly ConfigConflict[];
  /** The event tap every SSE response of this gateway reads from (one per process, made in main.ts). */
  runFeeds: RunFeeds;
  /** `@fastify/otel`, registered before the routes so each route gets its span. */
  otelPlugin?: FastifyOtelPlugin;
  /** The model client for `/agent/suggest` and the breaker states on `/health`. */
  llm?: FailoverLlmClient;
  settings: {
    bodyLimitBytes: number;
    trustProxy: boolean;
    heartbeatMs: number;
    sessionLockTtlMs: number;
    requestTimeoutMs: number;
    /** All attempts of one bus request together (README "Fault tolerance"). */
    requestDeadlineMs: number;
    wallClockMs: number;
    /** Past the run deadline, how long before this gateway ends a stream no router finished. */
    fallbackGraceMs: number;
    disconnectGraceMs: number;
    stopFlagTtlMs: number;
    steerQueueMax: number;
    userMaxConcurrentRuns: number;
    rateLimitPerMinute: number;
    /** How long an API key's holder or a token's user is remembered (GATEWAY_AUTH_CACHE_TTL_MS). */
    authCacheTtlMs: number;
    jwtSecret: string;
    jwtTtlSeconds: number;
    /** An external identity provider whose tokens are accepted too (AUTH_JWKS_*). */
    identityProvider?: IdentityProviderSettings;
    /** Browser origins allowed cross-origin (GATEWAY_CORS_ORIGINS). */
    corsOrigins: readonly string[];
    /** Credits of a user who has no quota account yet (QUILL_DEFAULT_CREDITS). */
    defaultCredits: number;
    /** How long a deleted project can be restored (PROJECT_RESTORE_DAYS). */
    projectRestoreDays: number;
    /** The built web app to serve at `/` (apps/web/dist); unset: the API alone. */
    webDistDir?: string;
  };
}

/**
 * What a refused request's unread body may cost before its answer goes out (unread-body.ts):
 * more than the largest upload any route takes (a project archive, 20 MiB), so a client that
 * sent a file too large still reads its 413.
 */
const UNREAD_BODY_LIMITS = { maxBytes: 32 * 1024 * 1024, maxMs: 10_000 };

export async function buildGatewayApp(dependencies: GatewayDependencies): Promise<FastifyInstance> {
  const app: FastifyInstance = Fastify({
    loggerInstance: dependencies.logger as FastifyBaseLogger,
    bodyLimit: dependencies.settings.bodyLimitBytes,
    trustProxy: dependencies.settings.trustProxy,
    requestIdHeader: 'x-request-id',
    genReqId: () => crypto.randomUUID(),
    ...frameworkErrorOptions(),
  });
  if (dependencies.otelPlugin) await app.register(dependencies.otelPlugin);
  const methods = createMethodIndex(app);
  app.decorate('registeredRoutes', () => methods.routes());
  installErrorHandler(app, methods);
  installUnreadBodyDrain(app, UNREAD_BODY_LIMITS);
  // JSON only (and the skills zip, in its plugin): any other body type is 415, not a string
  // that each route would have to refuse itself.
  app.removeContentTypeParser('text/plain');
  await installCors(app, dependencies.settings.corsOrigins);
  installSteerTelemetry(app, dependencies.bus);
  app.decorateRequest('user', undefined);
  app.decorateRequest('apiKeyId', undefined);
  await installRateLimit(app, {
    redis: dependencies.redis,
    nameSpace: dependencies.keys.rateLimit,
    perMinute: dependencies.settings.rateLimitPerMinute,
  });
  const { identityProvider } = dependencies.settings;
  const tokens = createTokenService(
    dependencies.settings.jwtSecret,
    dependencies.settings.jwtTtlSeconds,
    identityProvider ? createIdentityProvider(identityProvider) : undefined,
  );
  const tickets = createStreamTickets(dependencies.redis, dependencies.keys);
  const credentials = createCredentialCache({
    pool: dependencies.pool,
    bus: dependencies.bus,
    ttlMs: dependencies.settings.authCacheTtlMs,
  });
  app.addHook('onClose', async () => credentials.close());
  const authenticate = createAuthenticator(dependencies.pool, credentials, tokens, tickets);
  const watch = createRunWatch({ ...dependencies, logger: app.log, settings: dependencies.settings });
  const heartbeats = createHeartbeats(dependencies.settings.heartbeatMs);
  // Before the server stops: streams are handed to other gateways at once instead of holding the
  // shutdown until its timeout (README "Fault tolerance").
  app.addHook('preClose', async () => {
    const ended = heartbeats.handOff(SHUTDOWN_RECONNECT_MS);
    if (ended > 0) app.log.info({ streams: ended }, 'open streams told to reconnect elsewhere');
  });
  app.addHook('onClose', async () => heartbeats.close());
  await app.register(
    async (api) => {
      registerHealthRoutes(api, dependencies);
      registerOpenApiRoute(api);
      registerTokenRoutes(api, dependencies.pool, tokens);
      await api.register(async (authenticated) => {
        authenticated.addHook('preHandler', authenticate);
        registerAgentRoutes(authenticated, dependencies, { watch, heartbeats, tickets });
        registerAgentControlRoutes(authenticated, dependencies);
        registerRunRoutes(authenticated, dependencies);
        registerBillingRoutes(authenticated, dependencies);
        registerSuggestRoutes(authenticated, dependencies);
        registerFileRoutes(authenticated, dependencies);
        registerArtifactRoutes(authenticated, dependencies);
        registerDefinitionRoutes(authenticated, dependencies);
        registerContextTraceRoutes(authenticated, dependencies);
        registerFileVisibilityRoutes(authenticated, dependencies);
        registerProjectRoutes(authenticated, dependencies);
        registerProjectStateRoutes(authenticated, dependencies);
        registerSessionRoutes(authenticated, dependencies);
        registerSnapshotRoutes(authenticated, dependencies);
        registerBranchRoutes(authenticated, dependencies);
        registerMemberRoutes(authenticated, dependencies);
        registerAccountRoutes(authenticated, dependencies, credentials);
        await authenticated.register(skillRoutes(dependencies));
        await authenticated.register(projectTransferRoutes(dependencies));
      });
    },
    { prefix: '/api/v1' },
  );
  if (dependencies.settings.webDistDir) await installWebApp(app, dependencies.settings.webDistDir);
  return app;
}
