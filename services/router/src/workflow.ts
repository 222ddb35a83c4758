import type { AgentRole, ErrorCode, RunOutcome, StepResult, WorkflowStoppedReason } from '@quill/contracts';
import type { RunState } from './run-state.ts';

/**
 * Pure workflow decisions over the run state (STYLE 6: orchestration apart from side effects).
 * The walking skeleton plans a single writer step; routing and multi-role plans build on this.
 */
export type NextAction =
  | { kind: 'dispatch'; step: number; role: AgentRole }
  | { kind: 'wait'; step: number }
  | { kind: 'finish'; outcome: FinishOutcome };

export type FinishOutcome =
  | { terminal: 'complete' }
  | { terminal: 'stopped'; reason: WorkflowStoppedReason }
  | { terminal: 'error'; code: ErrorCode };

export function planFor(_start: { message: string }): AgentRole[] {
  return ['writer'];
}

export function nextAction(state: RunState, plan: readonly AgentRole[], maxIterations: number): NextAction {
  const ordered = [...state.results.values()].sort((a, b) => a.step - b.step);
  const last = ordered.at(-1);
  if (last && last.outcome !== 'completed') return { kind: 'finish', outcome: outcomeOfUnfinished(last) };
  const step = ordered.length;
  if (state.dispatched.has(step)) return { kind: 'wait', step };
  if (step >= plan.length) return { kind: 'finish', outcome: { terminal: 'complete' } };
  if (step >= maxIterations)
    return { kind: 'finish', outcome: { terminal: 'stopped', reason: 'collaboration_cap' } };
  return { kind: 'dispatch', step, role: plan[step]! };
}

function outcomeOfUnfinished(result: StepResult): FinishOutcome {
  if (result.outcome === 'stopped') {
    return {
      terminal: 'stopped',
      reason: result.stop_reason === 'client_disconnected' ? 'client_disconnected' : 'user_stopped',
    };
  }
  return { terminal: 'error', code: result.error_code ?? 'internal_error' };
}

export function toRunOutcome(outcome: FinishOutcome): RunOutcome {
  if (outcome.terminal === 'complete') return { terminal: 'complete', reason: 'completed' };
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
