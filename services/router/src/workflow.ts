import type { ErrorCode, RunOutcome, StepResult, WorkflowStoppedReason } from '@quill/contracts';
import type { RunState } from './run-state.ts';

/**
 * How a run ends, and what the finisher stores. The workflow rules (routing, plans, handoffs,
 * review gate, held text) are pure functions over the run state in `./workflow/` (STYLE 6).
 */
export type FinishOutcome =
  | { terminal: 'complete' }
  | { terminal: 'stopped'; reason: WorkflowStoppedReason }
  | { terminal: 'error'; code: ErrorCode };

export function outcomeOfUnfinished(result: StepResult): FinishOutcome {
  if (result.outcome === 'stopped') {
    // Runaway stops decided by the worker's budgets and guards keep their reason.
    const passThrough = [
      'client_disconnected',
      'no_progress',
      'model_call_cap',
      'token_budget',
      'tool_turns_exhausted',
    ] as const;
    const reason = passThrough.find((known) => known === result.stop_reason);
    return { terminal: 'stopped', reason: reason ?? 'user_stopped' };
  }
  return { terminal: 'error', code: result.error_code ?? 'internal_error' };
}

export function toRunOutcome(outcome: FinishOutcome): RunOutcome {
  if (outcome.terminal === 'complete') return { terminal: 'complete', reason: 'completed' };
  // Asking the author is a normal end of the run (billed as completed), not a stop.
  if (outcome.terminal === 'stopped' && outcome.reason === 'waiting_user') {
    return { terminal: 'complete', reason: 'waiting_user' };
  }
  if (outcome.terminal === 'stopped') return { terminal: 'stopped', reason: outcome.reason };
  return { terminal: 'error', reason: outcome.code };
}

/** The author-facing reply stored in history: each step's chat text, in order. */
export function assistantReply(state: RunState): string {
  return [...state.results.values()]
    .sort((a, b) => a.step - b.step)
    .map((result) => result.final_text.trim())
    .filter(Boolean)
    .join('\n\n');
}
