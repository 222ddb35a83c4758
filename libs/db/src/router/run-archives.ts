import type { SseFrame, StepRecordEnvelope } from '@quill/contracts';
import { isUuid } from '../ids.ts';
import type { Queryable } from '../pool.ts';

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

/**
 * Stores the archive and marks the run archived, once: a second call keeps the first copy. One
 * statement (atomic by itself): the copy and the mark, without a transaction's round trips.
 */
export async function saveRunArchive(
  db: Queryable,
  input: { runId: string; frames: ArchivedFrame[]; steps: ArchivedStep[] },
): Promise<boolean> {
  const { rows } = await db.query<{ saved: boolean }>(
    `WITH saved AS (
       INSERT INTO run_archives (run_id, frames, steps) VALUES ($1, $2, $3)
       ON CONFLICT (run_id) DO NOTHING RETURNING run_id
     ), marked AS (
       UPDATE runs SET archived_at = now() WHERE run_id = $1 AND archived_at IS NULL
     )
     SELECT EXISTS (SELECT 1 FROM saved) AS saved`,
    [input.runId, JSON.stringify(input.frames), JSON.stringify(input.steps)],
  );
  return rows[0]!.saved;
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
