import { type Bus, readStored } from '@quill/bus';
import { EventEnvelope, RUN_RECORDS_READ_ONE_BY_ONE, StepRecordEnvelope } from '@quill/contracts';
import type { ArchivedFrame, ArchivedStep } from '@quill/db';
import { saveRunArchive } from '@quill/db/router';
import type { Pool } from 'pg';

export type ArchiveResult = 'archived' | 'already' | 'not_ended';

/** A run's frames and step records with their stream sequences. */
export interface RunRecordCopy {
  frames: ArchivedFrame[];
  steps: ArchivedStep[];
}

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
  known?: RunRecordCopy,
): Promise<ArchiveResult> {
  const { frames, steps } = known ?? (await readRecord(bus, runId));
  // Frames but no `done`: someone is still ending the stream; the sweep comes back later.
  if (frames.length > 0 && !frames.some((item) => item.frame.type === 'done')) return 'not_ended';
  return (await saveRunArchive(pool, { runId, frames, steps })) ? 'archived' : 'already';
}

async function readRecord(bus: Bus, runId: string): Promise<RunRecordCopy> {
  const stream = bus.names.streams.events;
  const [events, steps] = await Promise.all([
    readStored(bus, { stream, subject: bus.names.events(runId), schema: EventEnvelope }),
    readStored(bus, {
      stream,
      subject: bus.names.steps(runId),
      schema: StepRecordEnvelope,
      few: RUN_RECORDS_READ_ONE_BY_ONE,
      settled: true,
    }),
  ]);
  return {
    frames: events.flatMap((item) => (item.envelope ? [{ seq: item.seq, frame: item.envelope.frame }] : [])),
    steps: steps.flatMap((item) => (item.envelope ? [{ seq: item.seq, record: item.envelope }] : [])),
  };
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
  settled: RunRecordCopy,
  storedAfter: readonly PublishedFrame[],
): RunRecordCopy | undefined {
  const bySeq = new Map<number, ArchivedFrame>(settled.frames.map((item) => [item.seq, item]));
  for (const { seq, frame, duplicate } of storedAfter) {
    if (bySeq.has(seq)) continue;
    if (duplicate) return undefined;
    bySeq.set(seq, { seq, frame });
  }
  return { frames: [...bySeq.values()].sort((a, b) => a.seq - b.seq), steps: settled.steps };
}
