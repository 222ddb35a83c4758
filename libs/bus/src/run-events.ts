import type { PubAck } from '@nats-io/jetstream';
import {
  EventEnvelope,
  RUN_RECORDS_READ_ONE_BY_ONE,
  type SettledRunRecord,
  type SseFrame,
  StepRecordEnvelope,
  UsageEnvelope,
} from '@quill/contracts';
import type { z } from 'zod';
import { decodeEnvelope } from './codec.ts';
import type { Bus } from './connection.ts';
import { type OrderedItem, readStored } from './ordered.ts';
import { type PublishOptions, publishEnvelope } from './publish.ts';
import { lastStored, nextStored, type RawStoredMessage } from './raw-reads.ts';
import { addReadConsumer } from './stored-range.ts';

/** Publishes an author-facing frame to `run.<runId>.events`. */
export function publishFrame(bus: Bus, value: SseFrame, options: PublishOptions = {}): Promise<PubAck> {
  return publishEnvelope(bus, bus.names.events(value.run_id), EventEnvelope, { v: 1, frame: value }, options);
}

/**
 * How long before a run's launch time its record is read from: room for the clock that stamped
 * the launch (the gateway's in `RunStartEnvelope.created_at`, PostgreSQL's in a run row's
 * `created_at`) and nats-server's to differ. A read that started too late is noticed and made
 * again from the stream's start (`readStoredRun`).
 */
export const RUN_RECORD_CLOCK_MARGIN_MS = 60_000;

/** Where a read of one run's record starts (`readStoredRun`). */
export type RunRecordStart = Pick<RunRecordOptions, 'startedSeq' | 'launchedAt'>;

export interface RunRecordOptions {
  /**
   * The sequence the run's `run_started` was stored at (as the router found it when it took the
   * run, or as the gateway's launch stored it): every subject is read from there, with no search
   * by time.
   */
  startedSeq?: number | undefined;
  /** When the run was launched (ISO time): its record is read from shortly before. */
  launchedAt?: string | undefined;
  /** Read the run's usage reports too. */
  usage?: boolean;
}

export interface RunRecordRead extends SettledRunRecord {
  /** The usage reports, when asked for (unparseable ones left out). */
  usage: UsageEnvelope[];
  /** The read from the launch time missed the run's start, and the record was read again. */
  reread: boolean;
}

/**
 * A run's stored frames and step records with their stream sequences, unparseable messages left
 * out, and its usage reports when asked: what billing settles from and what the router archives.
 * The step records and usage reports are read as settled subjects (their newest message bounds
 * the read): both read a run once it ended.
 *
 * Given the sequence of the run's `run_started`, all three subjects are read from there at once
 * (docs/decisions/0077). Otherwise, given the run's launch time, the frames are read from shortly
 * before it, and the other two subjects from the first frame on. Without either every read starts
 * at the stream's first message, and nats-server looks through each older block of the stream (a
 * day of every run's frames) for the run's subject, loading what it has let go of from disk
 * (docs/decisions/0075); from a time it still looks through the margin's minute of every run's
 * frames. The run's first frame is `run_started` (the launch stores it before the run is queued),
 * so a read that does not begin with it started at a wrong place (a wrong sequence, clocks further
 * apart than the margin) and is made again: from the launch time after a wrong sequence, from
 * the stream's start after a wrong time.
 */
export async function readStoredRun(
  bus: Bus,
  runId: string,
  options: RunRecordOptions = {},
): Promise<RunRecordRead> {
  const startedSeq = options.startedSeq ?? 0;
  if (Number.isSafeInteger(startedSeq) && startedSeq > 0) {
    const read = await readSubjects(bus, runId, { afterSeq: startedSeq - 1 }, options);
    if (beginsAtStart(read)) return recordOf(read, false);
    const again = await readStoredRun(bus, runId, { ...options, startedSeq: undefined });
    return { ...again, reread: true };
  }
  const launched = options.launchedAt ? Date.parse(options.launchedAt) : Number.NaN;
  if (!Number.isFinite(launched)) return recordOf(await readSubjects(bus, runId, {}, options), false);
  const since = new Date(launched - RUN_RECORD_CLOCK_MARGIN_MS);
  const read = await readSubjects(bus, runId, { since }, options);
  if (beginsAtStart(read)) return recordOf(read, false);
  return recordOf(await readSubjects(bus, runId, {}, options), true);
}

function beginsAtStart(read: SubjectReads): boolean {
  return read.events[0]?.envelope?.frame.type === 'run_started';
}

/**
 * The sequence just before a run's first frame, found from its launch time: where a read of the
 * run from its beginning starts, instead of at the stream's first message (docs/decisions/0076).
 * A consumer made by time names the sequence the time falls at (one request, and one to remove
 * it), and one direct get from there must find the run's `run_started`. 0, the stream's start,
 * when it does not: clocks further apart than the margin, or a run without one.
 */
export async function runStartSeq(bus: Bus, runId: string, launchedAt: string): Promise<number> {
  const launched = Date.parse(launchedAt);
  if (!Number.isFinite(launched)) return 0;
  const stream = bus.names.streams.events;
  const subject = bus.names.events(runId);
  const info = await addReadConsumer(bus, stream, subject, {
    time: new Date(launched - RUN_RECORD_CLOCK_MARGIN_MS),
  });
  void bus.jsm.consumers.delete(stream, info.name).catch(() => undefined);
  const first = await nextStored(bus, { stream, subject, afterSeq: info.delivered.stream_seq });
  // Otherwise the reader reads the run from the start and decides.
  return first && isRunStarted(subject, first) ? first.seq - 1 : 0;
}

/**
 * The sequence of the run's `run_started` while it is still the run's newest frame, as it is from
 * the launch until the router publishes the run's first frame of its own: one direct get from the
 * stream's end (`last_by_subj`), where nats-server finds a just-launched run at once
 * (docs/decisions/0077). Undefined when another frame came since, or none is stored.
 */
export async function runStartedIfNewest(bus: Bus, runId: string): Promise<number | undefined> {
  const subject = bus.names.events(runId);
  const newest = await lastStored(bus, { stream: bus.names.streams.events, subject });
  return newest && isRunStarted(subject, newest) ? newest.seq : undefined;
}

/** Whether a message stored on a run's frames is its `run_started` (an unreadable one is not). */
function isRunStarted(subject: string, stored: RawStoredMessage): boolean {
  try {
    return decodeEnvelope(EventEnvelope, subject, stored.data).frame.type === 'run_started';
  } catch {
    return false;
  }
}

/** The frames and step records of `readStoredRun`, without the usage reports. */
export async function readRunFramesAndSteps(
  bus: Bus,
  runId: string,
  start: RunRecordStart = {},
): Promise<SettledRunRecord> {
  const { frames, steps } = await readStoredRun(bus, runId, start);
  return { frames, steps };
}

interface SubjectReads {
  events: Array<OrderedItem<EventEnvelope>>;
  steps: Array<OrderedItem<StepRecordEnvelope>>;
  usage: Array<OrderedItem<UsageEnvelope>>;
}

/** Where a read of a run's subjects starts: after a sequence, from a time, or (neither) the stream's start. */
type ReadStart = { afterSeq?: number; since?: Date };

async function readSubjects(
  bus: Bus,
  runId: string,
  start: ReadStart,
  options: RunRecordOptions,
): Promise<SubjectReads> {
  const stream = bus.names.streams.events;
  const { since } = start;
  const fromSeq = start.afterSeq ?? 0;
  // Where the settled subjects are read after: a known sequence at once; from a time, just before
  // the first frame the timed read found (a step record or usage report is never stored before
  // the run's first frame); or the start.
  let startAt: (afterSeq: number | undefined) => void = () => undefined;
  const afterSeq = since
    ? new Promise<number | undefined>((resolve) => (startAt = resolve))
    : Promise.resolve(fromSeq);
  const events = readStored(bus, {
    stream,
    subject: bus.names.events(runId),
    schema: EventEnvelope,
    ...(since ? { since, onStart: (firstSeq: number) => startAt(firstSeq - 1) } : { afterSeq: fromSeq }),
  });
  // A read that ended without naming where it began leaves the others at the stream's start;
  // one that failed leaves them unread (the record fails with it).
  events.then(
    () => startAt(0),
    () => startAt(undefined),
  );
  const settled = <S extends z.ZodType>(subject: string, schema: S) =>
    afterSeq.then(
      (after): Promise<Array<OrderedItem<z.infer<S>>>> =>
        after === undefined
          ? Promise.resolve([])
          : readStored(bus, {
              stream,
              subject,
              schema,
              few: RUN_RECORDS_READ_ONE_BY_ONE,
              settled: true,
              afterSeq: after,
            }),
    );
  const [eventItems, stepItems, usageItems] = await Promise.all([
    events,
    settled(bus.names.steps(runId), StepRecordEnvelope),
    options.usage ? settled(bus.names.usage(runId), UsageEnvelope) : Promise.resolve([]),
  ]);
  return { events: eventItems, steps: stepItems, usage: usageItems };
}

function recordOf(read: SubjectReads, reread: boolean): RunRecordRead {
  return {
    reread,
    frames: read.events.flatMap((item) =>
      item.envelope ? [{ seq: item.seq, frame: item.envelope.frame }] : [],
    ),
    steps: read.steps.flatMap((item) => (item.envelope ? [{ seq: item.seq, record: item.envelope }] : [])),
    usage: read.usage.flatMap((item) => (item.envelope ? [item.envelope] : [])),
  };
}
