import type pg from 'pg';
import { isUuid } from '../ids.ts';
import type { Queryable } from '../pool.ts';
import { fencedStatement, type RunFence } from './run-fence.ts';

/**
 * A step's progress as the role worker records it (the shape belongs to @quill/agent-runtime;
 * this table only stores it). Written inside the run's write fence, so only the lease holder can
 * move it forward.
 */
export type StepJournal = Record<string, unknown>;

export async function loadStepJournal(
  db: Queryable,
  runId: string,
  step: number,
): Promise<StepJournal | null> {
  if (!isUuid(runId)) return null;
  const { rows } = await db.query<{ journal: StepJournal }>(
    'SELECT journal FROM step_journals WHERE run_id = $1 AND step = $2',
    [runId, step],
  );
  return rows[0]?.journal ?? null;
}

export async function saveStepJournal(
  db: Queryable,
  runId: string,
  step: number,
  journal: StepJournal,
): Promise<void> {
  await db.query(
    `INSERT INTO step_journals (run_id, step, journal) VALUES ($1, $2, $3)
     ON CONFLICT (run_id, step) DO UPDATE SET journal = EXCLUDED.journal, updated_at = now()`,
    [runId, step, JSON.stringify(journal)],
  );
}

/**
 * The step journal written under the run's write fence in one statement (fencedStatement): what a
 * worker records after every turn and at the step's end, where it used to take four round trips.
 */
export async function saveFencedStepJournal(
  pool: pg.Pool,
  fence: RunFence,
  step: number,
  journal: StepJournal,
): Promise<void> {
  await fencedStatement(pool, fence, {
    cte: `INSERT INTO step_journals (run_id, step, journal)
          SELECT $1, $3, $4 FROM fence WHERE fenced
          ON CONFLICT (run_id, step) DO UPDATE SET journal = EXCLUDED.journal, updated_at = now()
          RETURNING 1`,
    params: [step, JSON.stringify(journal)],
  });
}
