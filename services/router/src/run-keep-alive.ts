import { type RedisClient, type RedisKeys, type RunHold, renewRunHolds } from '@quill/redis';
import type { Logger } from 'pino';

/** A run this router is running, for as long as it runs it. */
export interface KeptRun {
  runId: string;
  sessionId: string;
  userId: string;
  /** Tells JetStream the run's delivery is still being worked on (an in-progress ack). */
  working(): void;
  log: Logger;
}

export interface RunKeepAlive {
  /** Keeps the run alive from the next tick on; the returned function stops it. */
  keep(run: KeptRun): () => void;
  stop(): void;
}

interface Kept {
  readonly run: KeptRun;
  readonly hold: RunHold;
  /** Its lock or slot was found gone: said once, not at every tick. */
  lostReported: boolean;
}

/**
 * What keeps a run the router holds alive for its whole life, every `intervalMs` (a third of the
 * run's ack wait): the delivery's in-progress ack, so JetStream does not hand the run to another
 * router, and the session lock and user slot the launch took, so the session stays busy and the
 * user's concurrency counts the run (docs/architecture.md "Scaling and failure"). One timer per process
 * for every run it holds, and one Redis call per few hundred runs
 * (docs/decisions/0057-run-keep-alive-per-process.md): a timer and two script calls per run cost
 * the router in proportion to the runs it held while they streamed, not to what they did.
 */
export function createRunKeepAlive(
  dependencies: { redis: RedisClient; keys: RedisKeys; logger: Logger },
  settings: { intervalMs: number; ttlMs: number },
): RunKeepAlive {
  const { redis, keys, logger } = dependencies;
  const kept = new Set<Kept>();
  // A renewal still waiting for Redis is not doubled by the next tick; the in-progress acks are
  // sent anyway, since they do not wait for it.
  let renewing = false;

  const tick = () => {
    if (kept.size === 0) return;
    const current = [...kept];
    for (const entry of current) {
      try {
        entry.run.working();
      } catch (error) {
        // A connection closing under a shutdown: the run's handler is being handed back anyway.
        entry.run.log.warn({ err: error }, 'in-progress ack not sent');
      }
    }
    if (renewing) return;
    renewing = true;
    void renewRunHolds(
      redis,
      current.map((entry) => entry.hold),
      settings.ttlMs,
    )
      .then((lost) => reportLost(current, new Set(lost), kept))
      .catch((error: unknown) =>
        logger.warn({ err: error, runs: current.length }, 'run keep-alive renewal failed'),
      )
      .finally(() => {
        renewing = false;
      });
  };
  const timer = setInterval(tick, settings.intervalMs);
  timer.unref();

  return {
    keep(run) {
      const entry: Kept = {
        run,
        hold: {
          runId: run.runId,
          sessionLockKey: keys.sessionLock(run.sessionId),
          semaphoreKey: keys.userSemaphore(run.userId),
        },
        lostReported: false,
      };
      kept.add(entry);
      return () => {
        kept.delete(entry);
      };
    },
    stop() {
      clearInterval(timer);
    },
  };
}

function reportLost(entries: readonly Kept[], lost: ReadonlySet<string>, kept: ReadonlySet<Kept>): void {
  for (const entry of entries) {
    // A run let go meanwhile has released its lock and slot itself: it lost nothing.
    if (!lost.has(entry.run.runId) || entry.lostReported || !kept.has(entry)) continue;
    entry.lostReported = true;
    // The run goes on; another launch of the session, or of the user, may have taken what lapsed.
    entry.run.log.warn('session lock or user slot had lapsed while the run was held');
  }
}
