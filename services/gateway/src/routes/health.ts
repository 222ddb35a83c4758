import { readBreakerStates } from '@quill/llm';
import type { FastifyInstance } from 'fastify';
import type { GatewayDependencies } from '../app.ts';

/** Liveness of every dependency plus the visible config conflicts (docs/agent-behaviour.md 坑 1). */
export function registerHealthRoutes(app: FastifyInstance, dependencies: GatewayDependencies): void {
  app.get('/health', async (_request, reply) => {
    const checks = await Promise.all([
      probe('postgres', () => dependencies.pool.query('SELECT 1')),
      probe('redis', () => dependencies.redis.ping()),
      probe('nats', () => dependencies.bus.jsm.getAccountInfo()),
    ]);
    const ok = checks.every((check) => check.ok);
    const providers = dependencies.llm?.providers.map((provider) => provider.name) ?? [];
    // Shared by every replica (Redis), so any gateway shows what every worker sees.
    const breakers = await readBreakerStates(dependencies.redis, dependencies.keys, providers).catch(
      () => null,
    );
    return reply.code(ok ? 200 : 503).send({
      status: ok ? 'ok' : 'degraded',
      instance: dependencies.instanceId,
      dependencies: Object.fromEntries(checks.map((check) => [check.name, check.ok ? 'ok' : 'unavailable'])),
      config_conflicts: dependencies.configConflicts,
      llm_breakers: breakers,
    });
  });
}

async function probe(name: string, check: () => Promise<unknown>): Promise<{ name: string; ok: boolean }> {
  try {
    await Promise.race([
      check(),
      new Promise((_, reject) => setTimeout(() => reject(new Error('timeout')), 2000).unref()),
    ]);
    return { name, ok: true };
  } catch {
    return { name, ok: false };
  }
}
