import { isUuid } from '../ids.ts';
import type { Queryable } from '../pool.ts';

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
