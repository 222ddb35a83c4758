import type { Bus } from '@quill/bus';
import {
  claimExpiredRunLeases,
  holdRunLease,
  type RedisClient,
  type RedisKeys,
  releaseRunLease,
  renewRunLeases,
} from '@quill/redis';
import type { Logger } from 'pino';

interface Holding {
  readonly log: Logger;
  /** The lease was found gone: a peer took the run over. */
  lost: boolean;
}

export interface RunLeases {
  /** Held while this router runs the run; renewed every third of the lease. */
  hold(runId: string, ackSubject: string, logger: Logger): Promise<{ release(): Promise<void> }>;
  stop(): void;
}

/**
 * Fast takeover (README "Fault tolerance"): a router renews a short lease on every run it holds;
 * every router scans for leases whose owner stopped renewing (killed, frozen, partitioned) and
 * hands that run's delivery back to JetStream with a `-NAK` on its ack subject, so a live router
 * takes it over within the lease plus one scan instead of the whole ack wait. A frozen owner that
 * wakes up can only repeat what the new one publishes (fixed msg ids, stored once) and cannot end
 * the run twice (the run row leaves `running` once).
 *
 * One timer renews every lease the process holds, in one script call per few hundred runs
 * (docs/decisions/0044-per-process-lease-renewal.md): a timer and a Redis round trip per run
 * each third of the lease cost the router and Redis in proportion to the runs held.
 */
export function createRunLeases(
  dependencies: { bus: Bus; redis: RedisClient; keys: RedisKeys; logger: Logger },
  settings: { ttlMs: number; scanMs: number },
): RunLeases {
  const { bus, redis, logger } = dependencies;
  const keys = { leases: dependencies.keys.runLeases, acks: dependencies.keys.runLeaseAcks };
  const scan = setInterval(() => {
    void claimExpiredRunLeases(redis, keys)
      .then((claimed) => {
        for (const { runId, ackSubject } of claimed) {
          logger.warn({ run_id: runId }, 'run lease expired; handing the run back for takeover');
          bus.connection.publish(ackSubject, '-NAK');
        }
      })
      .catch((error: unknown) => logger.warn({ err: error }, 'run lease scan failed'));
  }, settings.scanMs);
  scan.unref();

  /**
   * The leases this process renews. A run is held by one handler at a time, but a handler that
   * lost its run may still be finishing when the run comes back to this process: each hold is its
   * own entry, and only the current one is renewed or removed.
   */
  const held = new Map<string, Holding>();
  // A renewal still waiting for Redis is not doubled by the next tick: the leases it carries
  // already count from when Redis ran it.
  let renewing = false;
  const renew = setInterval(
    () => {
      if (renewing || held.size === 0) return;
      renewing = true;
      const holdings = new Map(held);
      void renewRunLeases(redis, keys, [...holdings.keys()], settings.ttlMs)
        .then((lost) => {
          for (const runId of lost) {
            const holding = holdings.get(runId);
            if (!holding || holding.lost) continue;
            // Renewed no more: the lease cannot come back, and release() leaves the new owner's alone.
            holding.lost = true;
            if (held.get(runId) === holding) held.delete(runId);
            holding.log.warn('run lease lost to a peer; the run is being taken over');
          }
        })
        .catch((error: unknown) =>
          logger.warn({ err: error, runs: holdings.size }, 'run lease renewal failed'),
        )
        .finally(() => {
          renewing = false;
        });
    },
    Math.max(100, Math.floor(settings.ttlMs / 3)),
  );
  renew.unref();

  return {
    async hold(runId, ackSubject, log) {
      // Without its ack subject nobody could hand the run back: the ack wait remains its takeover.
      if (!ackSubject) return { release: async () => undefined };
      await holdRunLease(redis, keys, runId, ackSubject, settings.ttlMs);
      const holding: Holding = { log, lost: false };
      held.set(runId, holding);
      return {
        async release() {
          if (held.get(runId) === holding) held.delete(runId);
          if (!holding.lost) await releaseRunLease(redis, keys, runId);
        },
      };
    },
    stop() {
      clearInterval(scan);
      clearInterval(renew);
    },
  };
}
