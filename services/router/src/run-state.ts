import type { AgentRole, StepRecordEnvelope, StepResult } from '@quill/contracts';

/**
 * The router's view of a run, rebuilt purely from `run.<runId>.steps`: a takeover router folds
 * the stored records and lands in the same state the dead one had. A record applied twice (a
 * duplicate publish that slipped past dedupe) changes nothing.
 */
export interface RunState {
  readonly dispatched: ReadonlyMap<number, AgentRole>;
  readonly results: ReadonlyMap<number, StepResult>;
  /** Stream sequence of the last record folded in; live reading resumes after it. */
  readonly lastSeq: number;
}

export const emptyRunState: RunState = { dispatched: new Map(), results: new Map(), lastSeq: 0 };

export function applyStepRecord(state: RunState, record: StepRecordEnvelope, seq: number): RunState {
  const lastSeq = Math.max(state.lastSeq, seq);
  if (record.kind === 'dispatched') {
    if (state.dispatched.has(record.step)) return { ...state, lastSeq };
    return { ...state, dispatched: new Map(state.dispatched).set(record.step, record.role), lastSeq };
  }
  if (state.results.has(record.result.step)) return { ...state, lastSeq };
  return { ...state, results: new Map(state.results).set(record.result.step, record.result), lastSeq };
}
