import { type Bus, type RunRecordStart, readStoredRun } from '@quill/bus';
import { SETTLED_RECORD_MAX_BYTES, type SettledRunRecord, type StepResult } from '@quill/contracts';
import type { RunRecord } from './run-meter.ts';

/** The record the settlement decides from, and the stored messages it was read from. */
export interface StoredRunRecord extends RunRecord {
  /** Frames and step records with their stream sequences (invalid messages left out). */
  stored: SettledRunRecord;
  /** Read twice: the read from the launch time did not begin with the run's start. */
  reread: boolean;
}

/**
 * Everything the run published so far, replayed from JetStream: its author-facing frames, its
 * step results and its usage reports. Settlement decides from this record, never from a summary
 * the caller sends. Unparseable messages are skipped (their consumers already ended the run).
 * A run is settled once it ended, so its step records and usage reports are read as settled
 * subjects: their newest message bounds the read. The frames and step records are kept with their
 * sequences too: the settlement's reply hands them to the router's archive. Given the sequence of
 * the run's `run_started` (the router found it when it took the run), the read starts there; given
 * only its launch time, shortly before it; never at the stream's first message
 * (docs/decisions/0075, 0077).
 */
export async function readRunRecord(
  bus: Bus,
  runId: string,
  start: RunRecordStart = {},
): Promise<StoredRunRecord> {
  const read = await readStoredRun(bus, runId, { ...start, usage: true });
  const results = new Map<number, StepResult>();
  for (const { record } of read.steps) {
    // A step result published twice (a retried worker) is one step.
    if (record.kind === 'result') results.set(record.result.step, record.result);
  }
  return {
    frames: read.frames.map((item) => item.frame),
    steps: [...results.values()],
    usage: read.usage,
    stored: { frames: read.frames, steps: read.steps },
    reread: read.reread,
  };
}

/**
 * The record the settlement's reply carries for the router's archive, or undefined when it is
 * larger than SETTLED_RECORD_MAX_BYTES encoded (the router then reads the run itself).
 */
export function carriedRecord(record: StoredRunRecord): SettledRunRecord | undefined {
  const bytes = Buffer.byteLength(JSON.stringify(record.stored));
  return bytes <= SETTLED_RECORD_MAX_BYTES ? record.stored : undefined;
}
