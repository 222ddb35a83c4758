import type { BillingSettleReply, BillingSettleRequest } from '@quill/contracts';
import { listUnsettledEndedRuns, withAdvisoryLockPass } from '@quill/db';
import type { Pool } from 'pg';
import type { Logger } from 'pino';
import { outcomeOfRow } from './run-outcome.ts';

export interface ReconcilerSettings {
  intervalMs: number;
  /** A run is left to its router this long after it ended. */
  minAgeSeconds: number;
  batch: number;
}

export interface ReconcileReport {
  /** False when another replica held the pass. */
  ran: boolean;
  settled: number;
  failed: number;
}

// One pass at a time across every billing replica: a session-level advisory lock, released with
// the connection if the replica dies mid-pass (PostgreSQL "Advisory Locks").
const RECONCILE_LOCK_KEY = 'quill.billing.reconcile';

/**
 * Settlement reconciliation (README "Fault tolerance"): settles every ended run the router could
 * not settle (billing down, the router dead after the terminal frame). Settlement is once per run
 * (its row's primary key), so a pass that races the router changes nothing. Run rows themselves
 * (phases, ended streams) are the router's sweep's (services/router/src/phases/run-sweep.ts).
 */
export function createReconciler(
  dependencies: {
    pool: Pool;
    logger: Logger;
    settle: (request: BillingSettleRequest) => Promise<BillingSettleReply>;
  },
  settings: ReconcilerSettings,
) {
  const { pool, logger, settle } = dependencies;

  async function runOnce(): Promise<ReconcileReport> {
    const report: ReconcileReport = { ran: false, settled: 0, failed: 0 };
    report.ran = await withAdvisoryLockPass(pool, RECONCILE_LOCK_KEY, async () => {
      await settleUnsettled(report);
    });
    return report;
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
          // The record is read from shortly before the launch (docs/decisions/0075).
          launched_at: run.createdAt,
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

  let timer: NodeJS.Timeout | undefined;
  let passing: Promise<unknown> = Promise.resolve();
  let stopped = false;
  const schedule = () => {
    if (stopped) return;
    timer = setTimeout(() => {
      passing = runOnce()
        .then((report) => {
          if (report.settled || report.failed) logger.info(report, 'reconciliation pass');
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
