import type { Bus } from '@quill/bus';
import type { ConfigConflict } from '@quill/config';
import type { RedisClient, RedisKeys } from '@quill/redis';
import type { FastifyOtelPlugin } from '@quill/telemetry';
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { Pool } from 'pg';
import type { Logger } from 'pino';
import { createAuthenticator } from './auth.ts';
import { installErrorHandler } from './http-errors.ts';
import { registerAgentRoutes } from './routes/agent.ts';
import { registerHealthRoutes } from './routes/health.ts';

export interface GatewayDependencies {
  bus: Bus;
  pool: Pool;
  redis: RedisClient;
  keys: RedisKeys;
  logger: Logger;
  instanceId: string;
  configConflicts: readonly ConfigConflict[];
  /** `@fastify/otel`, registered before the routes so each route gets its span. */
  otelPlugin?: FastifyOtelPlugin;
  settings: {
    bodyLimitBytes: number;
    trustProxy: boolean;
    heartbeatMs: number;
    sessionLockTtlMs: number;
    requestTimeoutMs: number;
  };
}

export async function buildGatewayApp(dependencies: GatewayDependencies): Promise<FastifyInstance> {
  const app: FastifyInstance = Fastify({
    loggerInstance: dependencies.logger as FastifyBaseLogger,
    bodyLimit: dependencies.settings.bodyLimitBytes,
    trustProxy: dependencies.settings.trustProxy,
    requestIdHeader: 'x-request-id',
    genReqId: () => crypto.randomUUID(),
  });
  if (dependencies.otelPlugin) await app.register(dependencies.otelPlugin);
  installErrorHandler(app);
  app.decorateRequest('user', undefined);
  const authenticate = createAuthenticator(dependencies.pool);
  await app.register(
    async (api) => {
      registerHealthRoutes(api, dependencies);
      await api.register(async (authenticated) => {
        authenticated.addHook('preHandler', authenticate);
        registerAgentRoutes(authenticated, dependencies);
      });
    },
    { prefix: '/api/v1' },
  );
  return app;
}
