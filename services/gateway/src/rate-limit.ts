import rateLimit from '@fastify/rate-limit';
import type { RedisClient } from '@quill/redis';
import type { FastifyInstance, FastifyRequest } from 'fastify';

/**
 * Per-user request rate on the endpoints that can trigger a model call (docs/agent-behaviour.md 请求与流 1),
 * counted in Redis so every gateway replica shares the budget. Routes opt in with
 * `modelRouteLimit`; the check runs after authentication so the key is the user, not the IP.
 */
export async function installRateLimit(
  app: FastifyInstance,
  options: { redis: RedisClient; nameSpace: string; perMinute: number },
): Promise<void> {
  await app.register(rateLimit, {
    global: false,
    hook: 'preHandler',
    redis: options.redis,
    nameSpace: options.nameSpace,
    max: options.perMinute,
    timeWindow: 60_000,
    keyGenerator: (request: FastifyRequest) => request.user?.id ?? request.ip,
    errorResponseBuilder: (_request, context) => ({ statusCode: context.statusCode, code: 'rate_limited' }),
  });
}

/** Route options that put a route under the per-user model-call rate limit. */
export const modelRouteLimit = { config: { rateLimit: {} } } as const;
