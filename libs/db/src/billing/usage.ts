import type { UsageEnvelope } from '@quill/contracts';
import { isUuid } from '../ids.ts';
import type { Queryable } from '../pool.ts';

/**
 * The usage ledger (docs/agent-behaviour.md invariant 3): one row per model call attempt as the provider
 * reported it (or estimated, marked `usage_source = estimate`). Days are UTC days.
 */
const TODAY_START_UTC = `(date_trunc('day', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC')`;

/**
 * Inserts one model call's usage; a redelivered or re-published report for the same
 * (run, call index, attempt) is a no-op. Returns whether a row was added.
 */
export async function recordUsage(db: Queryable, usage: UsageEnvelope): Promise<boolean> {
  const { rowCount } = await db.query(
    `INSERT INTO usage_records (run_id, user_id, call_index, attempt, role, provider, model,
       prompt_tokens, completion_tokens, total_tokens, usage_source)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
     ON CONFLICT (run_id, call_index, attempt) DO NOTHING`,
    [
      usage.run_id,
      usage.user_id,
      usage.call_index,
      usage.attempt,
      usage.role,
      usage.provider,
      usage.model,
      usage.usage.prompt_tokens,
      usage.usage.completion_tokens,
      usage.usage.total_tokens,
      usage.usage.usage_source,
    ],
  );
  return rowCount === 1;
}

export interface UsageTotals {
  calls: number;
  estimatedCalls: number;
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
}

export interface ModelUsage extends UsageTotals {
  provider: string;
  model: string;
}

// count/sum are int8: the pool parses them to numbers (token totals stay far below 2^53).
interface TotalsRow {
  calls: number;
  estimated_calls: number;
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

const TOTALS_COLUMNS = `count(*) AS calls,
  count(*) FILTER (WHERE usage_source = 'estimate') AS estimated_calls,
  coalesce(sum(prompt_tokens), 0) AS prompt_tokens,
  coalesce(sum(completion_tokens), 0) AS completion_tokens,
  coalesce(sum(total_tokens), 0) AS total_tokens`;

function toTotals(row: TotalsRow): UsageTotals {
  return {
    calls: Number(row.calls),
    estimatedCalls: Number(row.estimated_calls),
    promptTokens: Number(row.prompt_tokens),
    completionTokens: Number(row.completion_tokens),
    totalTokens: Number(row.total_tokens),
  };
}

/** The user's usage since the start of today (UTC), one entry per provider and model. */
export async function usageTodayByModel(db: Queryable, userId: string): Promise<ModelUsage[]> {
  if (!isUuid(userId)) return [];
  const { rows } = await db.query<TotalsRow & { provider: string; model: string }>(
    `SELECT provider, model, ${TOTALS_COLUMNS} FROM usage_records
     WHERE user_id = $1 AND created_at >= ${TODAY_START_UTC}
     GROUP BY provider, model ORDER BY provider, model`,
    [userId],
  );
  return rows.map((row) => ({ provider: row.provider, model: row.model, ...toTotals(row) }));
}

/**
 * Tokens the user has used today (UTC), what the daily cap is checked against, as an SQL
 * expression (`user` one too): billing's reserve checks it in its one statement (quota.ts).
 */
export function tokensUsedTodaySql(user: string): string {
  return `(SELECT coalesce(sum(total_tokens), 0) FROM usage_records
     WHERE user_id = ${user} AND created_at >= ${TODAY_START_UTC})`;
}

/** Tokens the user has used today (UTC): what the daily cap is checked against. */
export async function tokensUsedToday(db: Queryable, userId: string): Promise<number> {
  if (!isUuid(userId)) return 0;
  const { rows } = await db.query<{ total_tokens: number }>(
    `SELECT ${tokensUsedTodaySql('$1')} AS total_tokens`,
    [userId],
  );
  return Number(rows[0]!.total_tokens);
}
