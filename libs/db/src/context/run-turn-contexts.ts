import { isUuid } from '../ids.ts';
import type { Queryable } from '../pool.ts';

/** The run's stored turn context (its shape is the context service's; checked there), or null. */
export async function getRunTurnContext(db: Queryable, runId: string): Promise<unknown> {
  if (!isUuid(runId)) return null;
  const { rows } = await db.query<{ turn: unknown }>('SELECT turn FROM run_turn_contexts WHERE run_id = $1', [
    runId,
  ]);
  return rows[0]?.turn ?? null;
}

/**
 * Stores the run's turn context unless one is stored already, and returns the one that is: two
 * steps compiling at once both end up with the first one written.
 */
export async function saveRunTurnContext(db: Queryable, runId: string, turn: unknown): Promise<unknown> {
  const inserted = await db.query<{ turn: unknown }>(
    'INSERT INTO run_turn_contexts (run_id, turn) VALUES ($1, $2) ON CONFLICT (run_id) DO NOTHING RETURNING turn',
    [runId, JSON.stringify(turn)],
  );
  if (inserted.rows[0]) return inserted.rows[0].turn;
  // A separate statement: its snapshot sees the row the racing compile committed.
  return (await getRunTurnContext(db, runId)) ?? turn;
}
