import { isUuid } from '../ids.ts';
import type { Queryable } from '../pool.ts';

export interface StoredContextTrace {
  role: string;
  step: number;
  trace: unknown;
  createdAt: string;
}

/** One row per compile (run, role, step); a recompile after a takeover adds another row. */
export async function insertContextTrace(
  db: Queryable,
  input: { runId: string; role: string; step: number; trace: unknown },
): Promise<void> {
  await db.query('INSERT INTO context_traces (run_id, role, step, trace) VALUES ($1, $2, $3, $4)', [
    input.runId,
    input.role,
    input.step,
    JSON.stringify(input.trace),
  ]);
}

export async function listContextTraces(db: Queryable, runId: string): Promise<StoredContextTrace[]> {
  if (!isUuid(runId)) return [];
  const { rows } = await db.query<{ role: string; step: number; trace: unknown; created_at: string }>(
    'SELECT role, step, trace, created_at FROM context_traces WHERE run_id = $1 ORDER BY step, created_at',
    [runId],
  );
  return rows.map((row) => ({ role: row.role, step: row.step, trace: row.trace, createdAt: row.created_at }));
}
