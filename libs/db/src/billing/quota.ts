import { isUuid } from '../ids.ts';
import type { Queryable } from '../pool.ts';
import { tokensUsedTodaySql } from './usage.ts';

/** Opens the user's quota account with `credits` if it has none; an existing balance is kept. */
export async function ensureQuotaAccount(db: Queryable, userId: string, credits: number): Promise<number> {
  const { rows } = await db.query<{ credits: number }>(
    `INSERT INTO quota_accounts (user_id, credits) VALUES ($1, $2)
     ON CONFLICT (user_id) DO UPDATE SET user_id = EXCLUDED.user_id
     RETURNING credits`,
    [userId, credits],
  );
  return rows[0]!.credits;
}

/** The user's balance, or null when they have no quota account. */
export async function getCredits(db: Queryable, userId: string): Promise<number | null> {
  if (!isUuid(userId)) return null;
  const { rows } = await db.query<{ credits: number }>(
    'SELECT credits FROM quota_accounts WHERE user_id = $1',
    [userId],
  );
  return rows[0]?.credits ?? null;
}

export interface QuotaAccount {
  credits: number;
  /** Tokens per UTC day; null = no cap. */
  dailyTokenCap: number | null;
}

/** The user's account, or null when they have none yet (they get the default on first reserve). */
export async function getQuotaAccount(db: Queryable, userId: string): Promise<QuotaAccount | null> {
  if (!isUuid(userId)) return null;
  const { rows } = await db.query<{ credits: number; daily_token_cap: number | null }>(
    'SELECT credits, daily_token_cap FROM quota_accounts WHERE user_id = $1',
    [userId],
  );
  const row = rows[0];
  return row ? { credits: row.credits, dailyTokenCap: row.daily_token_cap } : null;
}

export type CreditReservation =
  | { ok: true; creditsLeft: number }
  | { ok: false; code: 'quota_exhausted' | 'cost_cap_reached' }
  /** The account was opened by a concurrent statement this one cannot see yet: ask again. */
  | { ok: false; code: 'account_unseen' };

/**
 * A run's credit reservation in one statement (it is on the way to every run's first token,
 * docs/decisions/0030): a retried reserve of a run that has one answers the balance and deducts
 * nothing; a user whose tokens today reached their daily cap is refused before any deduction; the
 * debit only matches a positive balance, so it never goes negative, and its ledger row is in the
 * same statement. A user without an account gets one with `defaultCredits`, opened already
 * debited (one statement cannot update the row it inserts; a new account has no cap). A concurrent
 * second reserve of the same run fails on the ledger's unique (run_id, kind) and takes its debit
 * back with it.
 */
export async function reserveRunCredit(
  db: Queryable,
  input: { runId: string; userId: string; defaultCredits: number },
): Promise<CreditReservation> {
  const { rows } = await db.query<{
    prior_credits: number | null;
    account_seen: boolean;
    cap_reached: boolean;
    credits: number | null;
  }>(
    `WITH opened AS (
       INSERT INTO quota_accounts (user_id, credits) VALUES ($2, GREATEST($3::int - 1, 0))
       ON CONFLICT (user_id) DO NOTHING
       RETURNING credits, $3::int > 0 AS has_credit
     ), prior AS (
       SELECT q.credits FROM billing_ledger l JOIN quota_accounts q ON q.user_id = l.user_id
       WHERE l.run_id = $1 AND l.kind = 'reserve'
     ), account AS (
       SELECT daily_token_cap FROM quota_accounts WHERE user_id = $2
     ), capped AS (
       SELECT EXISTS (SELECT 1 FROM account WHERE daily_token_cap IS NOT NULL
         AND ${tokensUsedTodaySql('$2')} >= daily_token_cap) AS reached
     ), debited AS (
       UPDATE quota_accounts SET credits = credits - 1, updated_at = now()
       WHERE user_id = $2 AND credits > 0
         AND NOT EXISTS (SELECT 1 FROM prior) AND NOT (SELECT reached FROM capped)
       RETURNING credits
     ), taken AS (
       SELECT credits FROM debited UNION ALL SELECT credits FROM opened WHERE has_credit
     ), logged AS (
       INSERT INTO billing_ledger (run_id, user_id, kind, credits_delta, reason)
       SELECT $1, $2, 'reserve', -1, 'run' FROM taken
     )
     SELECT (SELECT credits FROM prior) AS prior_credits,
       EXISTS (SELECT 1 FROM account) OR EXISTS (SELECT 1 FROM opened) AS account_seen,
       (SELECT reached FROM capped) AS cap_reached,
       (SELECT credits FROM taken) AS credits`,
    [input.runId, input.userId, input.defaultCredits],
  );
  const row = rows[0]!;
  if (row.prior_credits !== null) return { ok: true, creditsLeft: row.prior_credits };
  if (row.credits !== null) return { ok: true, creditsLeft: row.credits };
  if (!row.account_seen) return { ok: false, code: 'account_unseen' };
  return { ok: false, code: row.cap_reached ? 'cost_cap_reached' : 'quota_exhausted' };
}
