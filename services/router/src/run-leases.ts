import type { Bus } from '@quill/bus';
import {
  claimExpiredRunLeases,
  holdRunLease,
  type RedisClient,
  type RedisKeys,
  releaseRunLease,
  renewRunLease,
} from '@quill/redis';
import type { Logger } from 'pino';

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

  return {
    async hold(runId, ackSubject, log) {
      // Without its ack subject nobody could hand the run back: the ack wait remains its takeover.
      if (!ackSubject) return { release: async () => undefined };
      await holdRunLease(redis, keys, runId, ackSubject, settings.ttlMs);
      let lost = false;
      const renew = setInterval(
        () => {
          void renewRunLease(redis, keys, runId, settings.ttlMs)
            .then((held) => {
              if (!held && !lost) {
                lost = true;
                log.warn('run lease lost to a peer; the run is being taken over');
              }
            })
            .catch((error: unknown) => log.warn({ err: error }, 'run lease renewal failed'));
        },
        Math.max(100, Math.floor(settings.ttlMs / 3)),
      );
      return {
        async release() {
          clearInterval(renew);
          if (!lost) await releaseRunLease(redis, keys, runId);
        },
      };
    },
    stop() {
      clearInterval(scan);
    },
  };
}
