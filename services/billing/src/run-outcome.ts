import type { RunOutcome } from '@quill/contracts';
import type { UnsettledRun } from '@quill/db';

/** The outcome an ended run's row records, for settling it (its stored frames decide first). */
export function outcomeOfRow(run: Pick<UnsettledRun, 'phase' | 'stopReason' | 'errorCode'>): RunOutcome {
  if (run.phase === 'error') return { terminal: 'error', reason: run.errorCode ?? 'internal_error' };
  if (run.stopReason === 'completed' || !run.stopReason) return { terminal: 'complete', reason: 'completed' };
  return { terminal: 'stopped', reason: run.stopReason };
}
