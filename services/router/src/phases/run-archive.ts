import { type Bus, readStored } from '@quill/bus';
import { EventEnvelope, RUN_RECORDS_READ_ONE_BY_ONE, StepRecordEnvelope } from '@quill/contracts';
import type { ArchivedFrame, ArchivedStep } from '@quill/db';
import { saveRunArchive } from '@quill/db/router';
import type { Pool } from 'pg';

export type ArchiveResult = 'archived' | 'already' | 'not_ended';

/**
 * Copies a run's frames and step records from EVENTS (kept `EVENTS_MAX_AGE_H`) to the archive
 * (docs/architecture.md "Run archive"), once its stream holds `done`. A run whose stream already
 * expired is archived with what is left (nothing), so the sweep does not come back to it.
 */
export async function archiveRun(bus: Bus, pool: Pool, runId: string): Promise<ArchiveResult> {
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
  const frames: ArchivedFrame[] = events.flatMap((item) =>
    item.envelope ? [{ seq: item.seq, frame: item.envelope.frame }] : [],
  );
  // Frames but no `done`: someone is still ending the stream; the sweep comes back later.
  if (frames.length > 0 && !frames.some((item) => item.frame.type === 'done')) return 'not_ended';
  const records: ArchivedStep[] = steps.flatMap((item) =>
    item.envelope ? [{ seq: item.seq, record: item.envelope }] : [],
  );
  return (await saveRunArchive(pool, { runId, frames, steps: records })) ? 'archived' : 'already';
}
