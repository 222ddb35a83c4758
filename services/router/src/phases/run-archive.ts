import { type Bus, type RunRecordStart, readRunFramesAndSteps } from '@quill/bus';
import type { SettledRunRecord } from '@quill/contracts';
import type { ArchivedFrame } from '@quill/db';
import { saveRunArchive } from '@quill/db/router';
import type { Pool } from 'pg';

export type ArchiveResult = 'archived' | 'already' | 'not_ended';

/**
 * Copies a run's frames and step records from EVENTS (kept `EVENTS_MAX_AGE_H`) to the archive
 * (docs/architecture.md "Run archive"), once its stream holds `done`. A run whose stream already
 * expired is archived with what is left (nothing), so the sweep does not come back to it. Given
 * the record (the settlement's read and the frames stored after it, see `settledRecordCopy`), it
 * archives that without reading the run again.
 */
export async function archiveRun(
  bus: Bus,
  pool: Pool,
  runId: string,
  known?: SettledRunRecord,
  /**
   * Where a read of the run starts: its `run_started`'s sequence (docs/decisions/0077), or shortly
   * before its launch time (docs/decisions/0075).
   */
  start: RunRecordStart = {},
): Promise<ArchiveResult> {
  const { frames, steps } = known ?? (await readRunFramesAndSteps(bus, runId, start));
  // Frames but no `done`: someone is still ending the stream; the sweep comes back later.
  if (frames.length > 0 && !frames.some((item) => item.frame.type === 'done')) return 'not_ended';
  return (await saveRunArchive(pool, { runId, frames, steps })) ? 'archived' : 'already';
}

/** A frame the finisher published, with the sequence its ack named. */
export interface PublishedFrame extends ArchivedFrame {
  /** The ack said the frame's msg id was stored before: `seq` is that message's. */
  duplicate: boolean;
}

/**
 * The run's record from what the settlement read and the frames the finisher stored after it
 * (`quota_refunded`, `done`), in stream order. A repeated publish (a router finishing the run
 * again) stored nothing new: its ack names the message stored before, which the settlement's
 * read holds when it was stored before the read. When it does not, what is stored under that
 * sequence is not known here (its time stamp is the first publisher's): undefined, and the
 * archive reads the run.
 */
export function settledRecordCopy(
  settled: SettledRunRecord,
  storedAfter: readonly PublishedFrame[],
): SettledRunRecord | undefined {
  const bySeq = new Map<number, ArchivedFrame>(settled.frames.map((item) => [item.seq, item]));
  for (const { seq, frame, duplicate } of storedAfter) {
    if (bySeq.has(seq)) continue;
    if (duplicate) return undefined;
    bySeq.set(seq, { seq, frame });
  }
  return { frames: [...bySeq.values()].sort((a, b) => a.seq - b.seq), steps: settled.steps };
}
