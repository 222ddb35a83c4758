import type { Bus } from '@quill/bus';
import type { BillingSettleReply, BillingSettleRequest } from '@quill/contracts';
import { quillMetrics } from '@quill/telemetry';
import type { Pool } from 'pg';
import type { Logger } from 'pino';
import { decideBilling, endingOf } from './decision.ts';
import { settleRun } from './ledger.ts';
import { meterRun } from './run-meter.ts';
import { analyzeRunOutput } from './run-output.ts';
import { carriedRecord, readRunRecord } from './run-record.ts';

/**
 * `billing.settle`: reads the run's own record from JetStream, decides charge or refund with
 * the pure rules, and persists the decision once (the settlement row's primary key). A retried
 * or concurrent settle gets the stored decision back, so money moves once.
 */
export function createSettleHandler(dependencies: { bus: Bus; pool: Pool; logger: Logger }) {
  const { bus, pool, logger } = dependencies;
  return async function settle(request: BillingSettleRequest): Promise<BillingSettleReply> {
    const record = await readRunRecord(bus, request.run_id, {
      startedSeq: request.started_seq,
      launchedAt: request.launched_at,
    });
    if (record.reread) {
      // The run's `run_started` is not where the request said, or the gateway's clock runs ahead
      // of nats-server's by more than the margin (or the run has no `run_started`): each such
      // settlement reads its run twice (docs/operations.md).
      quillMetrics().runRecordRereads.add(1);
      logger.warn(
        { run_id: request.run_id, started_seq: request.started_seq, launched_at: request.launched_at },
        'run record read again: its read did not begin with run_started',
      );
    }
    const output = analyzeRunOutput(record.frames);
    const verdict = decideBilling(endingOf(output.terminal, request.outcome), output);
    const meter = meterRun(record, output.terminal);
    const settlement = await settleRun(pool, {
      runId: request.run_id,
      userId: request.user_id,
      decision: verdict.decision,
      reason: verdict.reason,
      producedOutput: verdict.producedOutput,
      meter,
    });
    // The run row (the router's) records the decision from this reply, or, when billing settled
    // on its own, from the settlement row at the router's next sweep.
    const log = logger.child({ run_id: request.run_id });
    if (settlement.duplicate) {
      log.info(
        { decision: settlement.decision, billing_reason: settlement.reason },
        'settlement already made',
      );
    } else {
      const metrics = quillMetrics();
      metrics.billingSettlements.add(1, { decision: settlement.decision, reason: settlement.reason });
      if (settlement.creditsRefunded > 0) metrics.billingCreditsRefunded.add(settlement.creditsRefunded);
      // The one line per run that explains its bill (docs/agent-behaviour.md 「调试」).
      log.info(
        {
          billing_reason: settlement.reason,
          billing_decision: settlement.decision,
          produced_output: verdict.producedOutput,
          credits_refunded: settlement.creditsRefunded,
          longest_prose_chars: output.longestProseChars,
          reply_in_progress: output.replyInProgress,
          ...meter,
        },
        'Agent stream billing evaluated',
      );
    }
    // The record read here goes back with the decision: the router archives it once the run's
    // `done` is stored, without reading the run again (docs/decisions/0066-the-archive-from-the-settlements-read.md).
    const carried = carriedRecord(record);
    return {
      v: 1,
      ok: true,
      decision: settlement.decision,
      reason: settlement.reason,
      credits_refunded: settlement.creditsRefunded,
      duplicate: settlement.duplicate,
      ...(carried ? { record: carried } : {}),
    };
  };
}
