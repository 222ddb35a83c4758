import type { SseFrame, StepRecordEnvelope } from '@quill/contracts';
import type pg from 'pg';
import { isUuid } from '../ids.ts';
import type { Queryable } from '../pool.ts';
import { withTransaction } from '../pool.ts';

/**
 * The run archive (docs/architecture.md "Run archive"): a run's frames and step records, copied
 * by the router when its stream ended, each with its JetStream sequence (the SSE id). Written
 * once; the router owns it, the gateway replays from it once EVENTS no longer holds the run.
 */
export interface ArchivedFrame {
  seq: number;
  frame: SseFrame;
}
export interface ArchivedStep {
  seq: number;
  record: StepRecordEnvelope;
}

/** Stores the archive and marks the run archived, once: a second call keeps the first copy. */
export async function saveRunArchive(
  pool: pg.Pool,
  input: { runId: string; frames: ArchivedFrame[]; steps: ArchivedStep[] },
): Promise<boolean> {
  return withTransaction(pool, async (client) => {
    const { rowCount } = await client.query(
      `INSERT INTO run_archives (run_id, frames, steps) VALUES ($1, $2, $3) ON CONFLICT (run_id) DO NOTHING`,
      [input.runId, JSON.stringify(input.frames), JSON.stringify(input.steps)],
    );
    await client.query('UPDATE runs SET archived_at = now() WHERE run_id = $1 AND archived_at IS NULL', [
      input.runId,
    ]);
    return rowCount === 1;
  });
}

/** The archived frames after `afterSeq` (0 = all), in stream order; null when not archived. */
export async function getArchivedFrames(
  db: Queryable,
  runId: string,
  afterSeq = 0,
): Promise<ArchivedFrame[] | null> {
  if (!isUuid(runId)) return null;
  const { rows } = await db.query<{ frames: ArchivedFrame[] }>(
    'SELECT frames FROM run_archives WHERE run_id = $1',
    [runId],
  );
  if (!rows[0]) return null;
  return rows[0].frames.filter((item) => item.seq > afterSeq);
}
