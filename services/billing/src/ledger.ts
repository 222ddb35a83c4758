import type { BillingDecision } from '@quill/contracts';
import { withTransaction } from '@quill/db';
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
 * Settles a run exactly once. The settlement row's primary key serialises concurrent settles:
 * the loser of the insert reads the winner's decision, so money moves once and every caller
 * sees the same answer.
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
  return withTransaction(pool, async (client) => {
    const reserved = await client.query<{ credits_delta: number; user_id: string }>(
      `SELECT credits_delta, user_id FROM billing_ledger WHERE run_id = $1 AND kind = 'reserve'`,
      [input.runId],
    );
    const refundable = reserved.rows[0] ? -reserved.rows[0].credits_delta : 0;
    const creditsRefunded = input.decision === 'refund' ? refundable : 0;
    // Money goes back to whoever paid the reservation, whatever user id the caller sent.
    const userId = reserved.rows[0]?.user_id ?? input.userId;
    const inserted = await client.query(
      `INSERT INTO settlements (run_id, user_id, decision, reason, credits_refunded, produced_output, run_meter)
       VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (run_id) DO NOTHING`,
      [
        input.runId,
        userId,
        input.decision,
        input.reason,
        creditsRefunded,
        input.producedOutput ?? false,
        JSON.stringify(input.meter ?? {}),
      ],
    );
    if (inserted.rowCount === 0) {
      const existing = await client.query<{
        decision: BillingDecision;
        reason: string;
        credits_refunded: number;
      }>('SELECT decision, reason, credits_refunded FROM settlements WHERE run_id = $1', [input.runId]);
      const row = existing.rows[0]!;
      return {
        decision: row.decision,
        reason: row.reason,
        creditsRefunded: row.credits_refunded,
        duplicate: true,
      };
    }
    await client.query(
      `INSERT INTO billing_ledger (run_id, user_id, kind, credits_delta, reason) VALUES ($1, $2, $3, $4, $5)`,
      [input.runId, userId, input.decision, creditsRefunded, input.reason],
    );
    if (creditsRefunded > 0) {
      await client.query(
        'UPDATE quota_accounts SET credits = credits + $2, updated_at = now() WHERE user_id = $1',
        [userId, creditsRefunded],
      );
    }
    return { decision: input.decision, reason: input.reason, creditsRefunded, duplicate: false };
  });
}
