import type { Bus } from '@quill/bus';
import { getRun } from '@quill/db';
import type { RedisClient, RedisKeys } from '@quill/redis';
import { requestStop } from '@quill/run-control';
import type { FastifyBaseLogger } from 'fastify';
import type { Pool } from 'pg';

export interface RunWatchDependencies {
  bus: Bus;
  pool: Pool;
  redis: RedisClient;
  keys: RedisKeys;
  logger: FastifyBaseLogger;
  settings: { disconnectGraceMs: number; stopFlagTtlMs: number };
}

/**
 * A client that drops does not kill its run at once (docs/agent-behaviour.md: 断线): every gateway streaming a
 * run keeps `sse:<runId>` alive in Redis, and the gateway that saw the last client leave checks
 * after the grace period whether any replica picked the run up again. If none did, the run is
 * stopped with `client_disconnected`.
 */
export function createRunWatch(dependencies: RunWatchDependencies) {
  const { redis, keys, settings } = dependencies;
  const refreshMs = Math.max(250, Math.floor(settings.disconnectGraceMs / 3));
  const ttlMs = Math.max(1000, settings.disconnectGraceMs);

  // One refresher per run however many of its streams this replica holds: a run watched by
  // thousands of tabs costs one key write per period, not one per stream.
  const watched = new Map<string, { streams: number; timer: NodeJS.Timeout }>();

  return function attach(runId: string): { detach(clientLeft: boolean): void } {
    const key = keys.runWatchers(runId);
    let entry = watched.get(runId);
    if (!entry) {
      const touch = () =>
        redis
          .set(key, '1', 'PX', ttlMs)
          .catch((error: unknown) => dependencies.logger.warn({ err: error }, 'watch refresh failed'));
      void touch();
      const timer = setInterval(touch, refreshMs);
      timer.unref();
      entry = { streams: 0, timer };
      watched.set(runId, entry);
    }
    entry.streams++;
    const held = entry;
    let detached = false;
    return {
      detach(clientLeft) {
        if (detached) return;
        detached = true;
        if (--held.streams > 0) return;
        clearInterval(held.timer);
        watched.delete(runId);
        if (!clientLeft) return;
        // Let the key lapse unless another replica's stream refreshes it, then decide.
        const check = setTimeout(() => void stopIfAbandoned(runId), ttlMs + refreshMs);
        check.unref();
      },
    };
  };

  async function stopIfAbandoned(runId: string): Promise<void> {
    try {
      if (await redis.exists(keys.runWatchers(runId))) return;
      const run = await getRun(dependencies.pool, runId);
      if (run?.phase !== 'running' && run?.phase !== 'idle') return;
      dependencies.logger.info({ run_id: runId }, 'no client came back; stopping run');
      await requestStop(dependencies.bus, redis, keys, runId, 'client_disconnected', settings.stopFlagTtlMs);
    } catch (error) {
      dependencies.logger.error({ err: error, run_id: runId }, 'disconnect check failed');
    }
  }
}

export type RunWatch = ReturnType<typeof createRunWatch>;
