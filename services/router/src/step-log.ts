import { type Bus, type OrderedReader, readOrdered, readStored } from '@quill/bus';
import { StepRecordEnvelope } from '@quill/contracts';
import type { Logger } from 'pino';
import { applyStepRecord, emptyRunState, type RunState, STEP_RECORDS_READ_ONE_BY_ONE } from './run-state.ts';

/** Replays what is stored for a run, then follows new step records live. */
export interface StepLog {
  readonly state: RunState;
  /** Waits until a result for `step` is folded in; false when `deadline` (epoch ms) passes or `signal` aborts. */
  waitForResult(step: number, deadline: number, signal: AbortSignal): Promise<boolean>;
  close(): Promise<void>;
}

export async function openStepLog(bus: Bus, runId: string, logger: Logger): Promise<StepLog> {
  const subject = bus.names.steps(runId);
  const stream = bus.names.streams.events;
  let state = emptyRunState;
  const fold = (item: { seq: number; envelope: StepRecordEnvelope | undefined; invalid?: Error }) => {
    if (item.envelope) state = applyStepRecord(state, item.envelope, item.seq);
    else logger.error({ seq: item.seq, err: item.invalid }, 'invalid step record skipped');
  };
  const stored = await readStored(bus, {
    stream,
    subject,
    schema: StepRecordEnvelope,
    few: STEP_RECORDS_READ_ONE_BY_ONE,
  });
  for (const item of stored) fold(item);

  let reader: OrderedReader<StepRecordEnvelope> | undefined;
  type Item = { seq: number; envelope: StepRecordEnvelope | undefined };
  let iterator: AsyncIterator<Item> | undefined;
  // A next() that lost a race against the deadline is kept, not called again: its item would
  // otherwise be skipped.
  let pendingNext: Promise<IteratorResult<Item>> | undefined;
  const live = async () => {
    if (!iterator) {
      reader = await readOrdered(bus, {
        stream,
        subject,
        schema: StepRecordEnvelope,
        startSeq: state.lastSeq + 1,
      });
      iterator = reader[Symbol.asyncIterator]();
    }
    return iterator;
  };

  return {
    get state() {
      return state;
    },
    async waitForResult(step, deadline, signal) {
      const records = await live();
      while (!state.results.has(step)) {
        const remaining = deadline - Date.now();
        if (remaining <= 0 || signal.aborted) return false;
        let timer: NodeJS.Timeout | undefined;
        let onAbort: (() => void) | undefined;
        const timeout = new Promise<'timeout'>((resolve) => {
          timer = setTimeout(() => resolve('timeout'), remaining);
          onAbort = () => resolve('timeout');
          signal.addEventListener('abort', onAbort, { once: true });
        });
        pendingNext ??= records.next();
        const next = await Promise.race([pendingNext, timeout]);
        clearTimeout(timer);
        if (onAbort) signal.removeEventListener('abort', onAbort);
        if (next === 'timeout') return false;
        pendingNext = undefined;
        if (next.done) return false;
        fold(next.value);
      }
      return true;
    },
    async close() {
      await reader?.close();
    },
  };
}
