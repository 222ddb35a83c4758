import { type Bus, publishFrame, readStored } from '@quill/bus';
import {
  type BillingSettleReply,
  type BillingSettleRequest,
  EventEnvelope,
  errorFrame,
  frame,
  isTerminalFrame,
  msgIds,
  type SseFrame,
} from '@quill/contracts';
import {
  finishRun,
  getActiveRunForSession,
  listRunningRunsOlderThan,
  listUnsettledEndedRuns,
  setSessionPhase,
} from '@quill/db';
import type { Pool } from 'pg';
import type { Logger } from 'pino';
import { outcomeOfRow, runEndingFromFrame } from './run-ending.ts';

export interface ReconcilerSettings {
  intervalMs: number;
  /** A run is left to its router this long after it ended or started. */
  minAgeSeconds: number;
  /** Past its start, a run no router or gateway ended is ended here (`worker_lost`). */
  abandonedAfterSeconds: number;
  batch: number;
}

export interface ReconcileReport {
  /** False when another replica held the pass. */
  ran: boolean;
  settled: number;
  finished: number;
  ended: number;
  failed: number;
}

// One pass at a time across every billing replica: a session-level advisory lock, released with
// the connection if the replica dies mid-pass (PostgreSQL "Advisory Locks").
const RECONCILE_LOCK_KEY = 'quill.billing.reconcile';

/**
 * Settlement reconciliation (README "Fault tolerance"): settles every ended run the router could
 * not settle (billing down, the router dead after the terminal frame), and brings to its terminal
 * phase every run whose stream ended while its row stayed `running`, ending the stream first when
 * nobody did past the run's deadline. Settlement is once per run (its row's primary key), so a
 * pass that races the router changes nothing.
 */
export function createReconciler(
  dependencies: {
    bus: Bus;
    pool: Pool;
    logger: Logger;
    settle: (request: BillingSettleRequest) => Promise<BillingSettleReply>;
  },
  settings: ReconcilerSettings,
) {
  const { bus, pool, logger, settle } = dependencies;

  async function runOnce(): Promise<ReconcileReport> {
    const report: ReconcileReport = { ran: false, settled: 0, finished: 0, ended: 0, failed: 0 };
    const client = await pool.connect();
    let broken: Error | undefined;
    try {
      const locked = await client.query<{ locked: boolean }>(
        'SELECT pg_try_advisory_lock(hashtext($1)) AS locked',
        [RECONCILE_LOCK_KEY],
      );
      if (!locked.rows[0]?.locked) return report;
      report.ran = true;
      try {
        await finishEndedStreams(report);
        await settleUnsettled(report);
      } finally {
        await client.query('SELECT pg_advisory_unlock(hashtext($1))', [RECONCILE_LOCK_KEY]).catch((error) => {
          // A connection that could not unlock still holds the lock: it must not go back to the pool.
          broken = error instanceof Error ? error : new Error(String(error));
        });
      }
      return report;
    } finally {
      client.release(broken);
    }
  }

  async function finishEndedStreams(report: ReconcileReport): Promise<void> {
    const running = await listRunningRunsOlderThan(pool, {
      minAgeSeconds: settings.minAgeSeconds,
      limit: settings.batch,
    });
    for (const run of running) {
      try {
        let frames = await storedFrames(run.runId);
        if (!frames.some((value) => value.type === 'done')) {
          const age = (Date.now() - Date.parse(run.createdAt)) / 1000;
          if (age < settings.abandonedAfterSeconds) continue;
          await endAbandonedStream(run.runId, frames);
          report.ended++;
          frames = await storedFrames(run.runId);
        }
        const terminal = frames.find(isTerminalFrame);
        const ending = terminal ? runEndingFromFrame(terminal) : undefined;
        if (!ending) continue;
        if (await finishRun(pool, run.runId, ending.run)) {
          report.finished++;
          // The session lock may have lapsed and let a next run start: that one owns the session.
          if (!(await getActiveRunForSession(pool, run.sessionId))) {
            await setSessionPhase(
              pool,
              run.sessionId,
              ending.sessionPhase,
              ending.sessionPhase === 'waiting_user' ? { clarificationPending: true } : {},
            );
          }
          logger.warn({ run_id: run.runId, phase: ending.run.phase }, 'reconciled the phase of an ended run');
        }
      } catch (error) {
        report.failed++;
        logger.error({ err: error, run_id: run.runId }, 'could not reconcile a running run');
      }
    }
  }

  async function settleUnsettled(report: ReconcileReport): Promise<void> {
    const unsettled = await listUnsettledEndedRuns(pool, {
      minAgeSeconds: settings.minAgeSeconds,
      limit: settings.batch,
    });
    for (const run of unsettled) {
      try {
        const reply = await settle({
          v: 1,
          run_id: run.runId,
          user_id: run.userId,
          outcome: outcomeOfRow(run),
        });
        if (!reply.ok) throw new Error(`settlement refused: ${reply.code}`);
        report.settled++;
        logger.warn(
          { run_id: run.runId, billing_decision: reply.decision, duplicate: reply.duplicate },
          'reconciled an unsettled run',
        );
      } catch (error) {
        report.failed++;
        logger.error({ err: error, run_id: run.runId }, 'could not settle an unsettled run');
      }
    }
  }

  async function storedFrames(runId: string): Promise<SseFrame[]> {
    const stored = await readStored(bus, {
      stream: bus.names.streams.events,
      subject: bus.names.events(runId),
      schema: EventEnvelope,
    });
    return stored.flatMap((item) => (item.envelope ? [item.envelope.frame] : []));
  }

  /** Past the deadline with nobody left to end it: the frames the gateway's fallback would send. */
  async function endAbandonedStream(runId: string, frames: SseFrame[]): Promise<void> {
    logger.error({ run_id: runId }, 'run abandoned past its deadline; ending its stream');
    if (!frames.some(isTerminalFrame)) {
      await publishFrame(bus, errorFrame(runId, 'worker_lost'), { msgId: msgIds.terminal(runId) });
    }
    await publishFrame(bus, frame('done', runId, {}), { msgId: msgIds.done(runId) });
  }

  let timer: NodeJS.Timeout | undefined;
  let passing: Promise<unknown> = Promise.resolve();
  let stopped = false;
  const schedule = () => {
    if (stopped) return;
    timer = setTimeout(() => {
      passing = runOnce()
        .then((report) => {
          if (report.settled || report.finished || report.ended || report.failed)
            logger.info(report, 'reconciliation pass');
        })
        .catch((error: unknown) => logger.warn({ err: error }, 'reconciliation pass failed'))
        .finally(schedule);
    }, settings.intervalMs);
    timer.unref();
  };

  return {
    runOnce,
    start() {
      schedule();
    },
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await passing;
    },
  };
}
