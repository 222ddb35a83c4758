import type { BillingDecision } from '@quill/contracts';
import { reserveRunCredit } from '@quill/db/billing';
import type { Pool } from 'pg';
import type { RunMeter } from './run-meter.ts';

export type ReserveResult =
  | { ok: true; creditsLeft: number }
  | { ok: false; code: 'quota_exhausted' | 'cost_cap_reached' };

/**
 * Pre-deducts one credit for a run, atomically: the balance can never go negative and a retried
 * reserve for the same run deducts once. A user whose provider-reported tokens today reached
 * their daily cap is refused before any deduction. One statement (reserveRunCredit): this is on
 * the way to every run's first token (docs/decisions/0030).
 */
export async function reserveCredit(
  pool: Pool,
  input: { runId: string; userId: string; defaultCredits: number },
): Promise<ReserveResult> {
  const first = await reserveRunCredit(pool, input);
  // An account a concurrent first reserve opened is visible to the next statement.
  const result = first.ok || first.code !== 'account_unseen' ? first : await reserveRunCredit(pool, input);
  if (!result.ok && result.code === 'account_unseen')
    throw new Error('quota account not visible after opening');
  return result;
}

export interface Settlement {
  decision: BillingDecision;
  reason: string;
  creditsRefunded: number;
  duplicate: boolean;
}

/**
 * Settles a run exactly once, in one statement (atomic by itself, no transaction's round trips):
 * the settlement row, its ledger entry and a refund's credits. The settlement row's primary key
 * serialises concurrent settles: the loser of the insert reads the winner's decision, so money
 * moves once and every caller sees the same answer.
 */
export async function settleRun(
  pool: Pool,
  input: {
    runId: string;
    userId: string;
    decision: BillingDecision;
    reason: string;
    producedOutput?: boolean;
    meter?: RunMeter;
  },
): Promise<Settlement> {
  const { rows } = await pool.query<SettlementRow>(
    `WITH reserved AS (
       SELECT credits_delta, user_id FROM billing_ledger WHERE run_id = $1::uuid AND kind = 'reserve'
     ), decided AS (
       -- Money goes back to whoever paid the reservation, whatever user id the caller sent.
       SELECT COALESCE((SELECT user_id FROM reserved), $2::uuid) AS user_id,
              CASE WHEN $3::text = 'refund' THEN COALESCE(-(SELECT credits_delta FROM reserved), 0) ELSE 0 END
                AS credits_refunded
     ), settled AS (
       INSERT INTO settlements (run_id, user_id, decision, reason, credits_refunded, produced_output, run_meter)
       SELECT $1::uuid, user_id, $3::text, $4::text, credits_refunded, $5::boolean, $6::jsonb FROM decided
       ON CONFLICT (run_id) DO NOTHING
       RETURNING user_id, decision, reason, credits_refunded
     ), ledgered AS (
       INSERT INTO billing_ledger (run_id, user_id, kind, credits_delta, reason)
       SELECT $1::uuid, user_id, decision, credits_refunded, reason FROM settled
     ), refunded AS (
       UPDATE quota_accounts q SET credits = q.credits + s.credits_refunded, updated_at = now()
       FROM settled s WHERE q.user_id = s.user_id AND s.credits_refunded > 0
     )
     SELECT decision, reason, credits_refunded, false AS duplicate FROM settled
     UNION ALL
     SELECT decision, reason, credits_refunded, true FROM settlements
     WHERE run_id = $1::uuid AND NOT EXISTS (SELECT 1 FROM settled)`,
    [
      input.runId,
      input.userId,
      input.decision,
      input.reason,
      input.producedOutput ?? false,
      JSON.stringify(input.meter ?? {}),
    ],
  );
  // Settled at the same moment by another call: its row, committed after this statement began,
  // is not in this statement's snapshot; a read of its own sees it.
  const row =
    rows[0] ??
    (
      await pool.query<SettlementRow>(
        'SELECT decision, reason, credits_refunded, true AS duplicate FROM settlements WHERE run_id = $1',
        [input.runId],
      )
    ).rows[0]!;
  return {
    decision: row.decision,
    reason: row.reason,
    creditsRefunded: row.credits_refunded,
    duplicate: row.duplicate,
  };
}

interface SettlementRow {
  decision: BillingDecision;
  reason: string;
  credits_refunded: number;
  duplicate: boolean;
}
