import { isUuid } from '../ids.ts';
import type { Queryable } from '../pool.ts';

export interface StoredContextTrace {
  role: string;
  step: number;
  trace: unknown;
  createdAt: string;
}

/**
 * One row per compile (run, role, step), with the compiled prompt; a compile that was not reused
 * (an older redelivery, a stored prompt that did not parse) adds another row.
 */
export async function insertContextTrace(
  db: Queryable,
  input: { runId: string; role: string; step: number; trace: unknown; messages?: unknown },
): Promise<void> {
  await db.query(
    'INSERT INTO context_traces (run_id, role, step, trace, messages) VALUES ($1, $2, $3, $4, $5)',
    [
      input.runId,
      input.role,
      input.step,
      JSON.stringify(input.trace),
      input.messages === undefined ? null : JSON.stringify(input.messages),
    ],
  );
}

/**
 * Clears the stored prompts of traces older than `olderThanMs`, in batches; the trace itself is
 * kept. Answers how many were cleared. A step can only be redelivered while its run lives, and
 * no run outlives its wall clock, so older prompts are never asked for again.
 */
export async function clearStoredPrompts(
  db: Queryable,
  input: { olderThanMs: number; batch?: number },
): Promise<number> {
  const batch = input.batch ?? 500;
  let cleared = 0;
  for (;;) {
    const { rowCount } = await db.query(
      `UPDATE context_traces SET messages = NULL
       WHERE ctid IN (
         SELECT ctid FROM context_traces
         WHERE messages IS NOT NULL AND created_at < now() - make_interval(secs => $1::double precision / 1000)
         LIMIT $2)`,
      [input.olderThanMs, batch],
    );
    cleared += rowCount ?? 0;
    if ((rowCount ?? 0) < batch) return cleared;
  }
}

/**
 * The prompt the step's first compile stored (its shape is the context service's; checked there),
 * or null: what a redelivered step runs with again.
 */
export async function getCompiledStepContext(
  db: Queryable,
  input: { runId: string; role: string; step: number },
): Promise<unknown> {
  if (!isUuid(input.runId)) return null;
  const { rows } = await db.query<{ messages: unknown }>(
    `SELECT messages FROM context_traces
     WHERE run_id = $1 AND step = $2 AND role = $3 AND messages IS NOT NULL
     ORDER BY created_at LIMIT 1`,
    [input.runId, input.step, input.role],
  );
  return rows[0]?.messages ?? null;
}

export async function listContextTraces(db: Queryable, runId: string): Promise<StoredContextTrace[]> {
  if (!isUuid(runId)) return [];
  const { rows } = await db.query<{ role: string; step: number; trace: unknown; created_at: string }>(
    'SELECT role, step, trace, created_at FROM context_traces WHERE run_id = $1 ORDER BY step, created_at',
    [runId],
  );
  return rows.map((row) => ({ role: row.role, step: row.step, trace: row.trace, createdAt: row.created_at }));
}
