import type { RunOutcome, SseFrame } from '@quill/contracts';
import type { FinishRunInput, UnsettledRun } from '@quill/db';

/**
 * What a run's row and session become once its stream has ended, from the terminal frame the
 * author saw; the same phases the router's finisher records (README "Run lifecycle"). Pure, for
 * the reconciler: a run whose router could not write its row (a database blip, a dead router
 * after the gateway ended the stream) still reaches its terminal phase.
 */
export interface RunEnding {
  run: FinishRunInput;
  sessionPhase: 'idle' | 'waiting_user';
  outcome: RunOutcome;
}

export function runEndingFromFrame(terminal: SseFrame): RunEnding | undefined {
  if (terminal.type === 'workflow_complete') {
    return {
      run: { phase: 'done', stopReason: 'completed' },
      sessionPhase: 'idle',
      outcome: { terminal: 'complete', reason: 'completed' },
    };
  }
  if (terminal.type === 'workflow_stopped') {
    const waiting = terminal.reason === 'waiting_user';
    return {
      run: { phase: waiting ? 'waiting_user' : 'done', stopReason: terminal.reason },
      sessionPhase: waiting ? 'waiting_user' : 'idle',
      outcome: { terminal: 'stopped', reason: terminal.reason },
    };
  }
  if (terminal.type === 'error') {
    return {
      run: { phase: 'error', stopReason: 'error', errorCode: terminal.code },
      sessionPhase: 'idle',
      outcome: { terminal: 'error', reason: terminal.code },
    };
  }
  return undefined;
}

/** The outcome an ended run's row records, for settling it (its stored frames decide first). */
export function outcomeOfRow(run: Pick<UnsettledRun, 'phase' | 'stopReason' | 'errorCode'>): RunOutcome {
  if (run.phase === 'error') return { terminal: 'error', reason: run.errorCode ?? 'internal_error' };
  if (run.stopReason === 'completed' || !run.stopReason) return { terminal: 'complete', reason: 'completed' };
  return { terminal: 'stopped', reason: run.stopReason };
}
