import { readRunFramesAndSteps, readStored } from '@quill/bus';
import { EventEnvelope, frame, type SettledRunRecord, StepRecordEnvelope } from '@quill/contracts';
import { getArchivedFrames } from '@quill/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countStoredReads } from '../../../test/support/test-bus.ts';
import { settledRecordCopy } from '../src/phases/run-archive.ts';
import { finishRunWith } from '../src/run-finisher.ts';
import { emptyRunState } from '../src/run-state.ts';
import { finisherDependencies, openRunRig, type RunRig, settled, takenRun } from './run-rig.ts';

let rig: RunRig;
/** Whether the billing stub hands back the run's record, as billing does for a run that fits. */
let carrying = true;
/** Reads of stored messages on the rig's connection (consumers made, direct gets). */
let reads: ReturnType<typeof countStoredReads>;
/** Those the billing stub made: the rest are the router's. */
let billingReads = 0;

/** The run's stored frames and step records with their sequences, read as billing reads them. */
/** What the stream holds, read plainly (each subject whole): the oracle the archive is held to. */
async function storedRecord(runId: string): Promise<SettledRunRecord> {
  const stream = rig.bus.names.streams.events;
  const [events, steps] = await Promise.all([
    readStored(rig.bus, { stream, subject: rig.bus.names.events(runId), schema: EventEnvelope }),
    readStored(rig.bus, { stream, subject: rig.bus.names.steps(runId), schema: StepRecordEnvelope }),
  ]);
  return {
    frames: events.flatMap((item) => (item.envelope ? [{ seq: item.seq, frame: item.envelope.frame }] : [])),
    steps: steps.flatMap((item) => (item.envelope ? [{ seq: item.seq, record: item.envelope }] : [])),
  };
}

beforeAll(async () => {
  rig = await openRunRig('run-archive', async (request) => {
    const reply = settled('refund', 2);
    if (!carrying) return reply;
    const before = reads.count;
    // As billing reads the run to settle it.
    const record = await readRunFramesAndSteps(rig.bus, request.run_id);
    billingReads += reads.count - before;
    return { ...reply, record };
  });
  reads = countStoredReads(rig.bus);
});
afterAll(async () => {
  reads.restore();
  await rig.close();
});

const dependencies = () => finisherDependencies(rig);

async function finishAndArchive(): Promise<{ archived: unknown; stored: unknown; reads: number }> {
  const start = await takenRun(rig);
  const [readsBefore, billingBefore] = [reads.count, billingReads];
  const outcome = { terminal: 'stopped' as const, reason: 'user_stopped' as const };
  await finishRunWith(dependencies(), start, emptyRunState, outcome, rig.logger);
  const routerReads = reads.count - readsBefore - (billingReads - billingBefore);
  const archived = await getArchivedFrames(rig.database.pool, start.run_id);
  const stored = (await storedRecord(start.run_id)).frames;
  return { archived, stored, reads: routerReads };
}

describe("the run's archive at its end", () => {
  it('is the settlement’s read and the frames stored after it, with the stream’s sequences, read from nowhere', async () => {
    carrying = true;
    const { archived, stored, reads } = await finishAndArchive();
    // The terminal frame (read by the settlement), then `quota_refunded` and `done` (stored after).
    expect((archived as Array<{ frame: { type: string } }>).map((item) => item.frame.type)).toEqual([
      'workflow_stopped',
      'quota_refunded',
      'done',
    ]);
    expect(archived).toEqual(stored);
    expect(reads).toBe(0);
  });

  it('is read from the stream when the settlement’s reply did not carry the record', async () => {
    carrying = false;
    const { archived, stored, reads } = await finishAndArchive();
    expect(archived).toEqual(stored);
    expect(reads).toBeGreaterThan(0);
  });
});

describe('settledRecordCopy', () => {
  const runId = '00000000-0000-4000-8000-000000000001';
  const terminal = { seq: 7, frame: frame('workflow_complete', runId, {}) };
  const done = frame('done', runId, {});

  it('puts what was stored after the settlement after what it read, in stream order', () => {
    expect(
      settledRecordCopy({ frames: [terminal], steps: [] }, [{ seq: 9, frame: done, duplicate: false }]),
    ).toEqual({ frames: [terminal, { seq: 9, frame: done }], steps: [] });
  });

  it('keeps the stored frame when a repeated publish names a sequence the settlement read', () => {
    const storedDone = { seq: 9, frame: frame('done', runId, {}) };
    const copy = settledRecordCopy({ frames: [terminal, storedDone], steps: [] }, [
      { seq: 9, frame: done, duplicate: true },
    ]);
    expect(copy?.frames).toEqual([terminal, storedDone]);
  });

  it('gives up (the archive reads the run) when a repeated publish names a sequence it did not read', () => {
    expect(
      settledRecordCopy({ frames: [terminal], steps: [] }, [{ seq: 9, frame: done, duplicate: true }]),
    ).toBeUndefined();
  });
});
