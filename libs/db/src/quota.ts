import { isUuid } from './ids.ts';
import type { Queryable } from './pool.ts';

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

// The balance column is a Postgres integer; a grant that would pass it is refused, not wrapped.
const MAX_BALANCE = 2_147_483_647;

export type GrantResult = { ok: true; credits: number } | { ok: false; reason: 'no_such_user' | 'overflow' };

/**
 * Adds `credits` (> 0) to the user's balance in one statement, opening the account with
 * `defaultCredits` first when they have none, and records who granted it.
 */
export async function grantCredits(
  db: Queryable,
  input: { userId: string; credits: number; grantedBy: string; defaultCredits: number },
): Promise<GrantResult> {
  if (!isUuid(input.userId)) return { ok: false, reason: 'no_such_user' };
  const { rows } = await db.query<{ credits: number | null; user_exists: boolean }>(
    `WITH target AS (SELECT id FROM users WHERE id = $1),
     account AS (
       INSERT INTO quota_accounts AS q (user_id, credits)
       SELECT id, $4::integer + $2::integer FROM target WHERE $4::bigint + $2::bigint <= $5
       ON CONFLICT (user_id) DO UPDATE SET credits = q.credits + $2::integer, updated_at = now()
         WHERE q.credits::bigint + $2::bigint <= $5
       RETURNING q.credits
     ),
     audit AS (
       INSERT INTO credit_grants (user_id, granted_by, credits) SELECT $1, $3, $2 FROM account
     )
     SELECT (SELECT credits FROM account) AS credits, EXISTS (SELECT 1 FROM target) AS user_exists`,
    [input.userId, input.credits, input.grantedBy, input.defaultCredits, MAX_BALANCE],
  );
  const row = rows[0]!;
  if (!row.user_exists) return { ok: false, reason: 'no_such_user' };
  if (row.credits === null) return { ok: false, reason: 'overflow' };
  return { ok: true, credits: row.credits };
}
