import type { StepResult } from '@quill/contracts';
import type { ToolRunState } from '@quill/tools';
import type { ToolStop } from './tool-turn.ts';

/** Why the worker loop ended a step early, besides an author stop or an error. */
export type StepStop = ToolStop | { kind: 'stopped'; stopReason: 'model_call_cap' | 'token_budget' };

type StepBase = Omit<StepResult, 'outcome' | 'stop_reason'>;

/** The `message_end` stop reason of a step the guards ended. */
export function stopReasonOf(stop: StepStop | undefined, finishReason: string): string {
  return stop && stop.kind !== 'yield' ? stop.stopReason : finishReason;
}

/**
 * The step result for a guard's stop. The breaker is a failure with its catalog code, so the
 * router ends the run with one `error` frame (refundable: false); budget stops are runaway stops
 * the router reports as `workflow_stopped` with the same reason.
 */
export function stepResultFor(
  base: StepBase,
  stop: StepStop | undefined,
  finishReason: string,
  state: Pick<ToolRunState, 'handoff' | 'clarification' | 'sources' | 'authorQuestions'>,
): StepResult {
  const sources = {
    ...(state.sources.length > 0 ? { sources: state.sources } : {}),
    ...(state.authorQuestions.length > 0 ? { author_questions: [...state.authorQuestions] } : {}),
  };
  if (stop?.kind === 'failed') {
    return {
      ...base,
      ...sources,
      outcome: 'failed',
      stop_reason: stop.stopReason,
      error_code: 'tool_failure_circuit_open',
    };
  }
  if (stop?.kind === 'stopped')
    return { ...base, ...sources, outcome: 'stopped', stop_reason: stop.stopReason };
  return { ...base, ...sources, outcome: 'completed', stop_reason: finishReason, ...yieldFields(state) };
}

/** What the model asked the router for (handoff_to_agent / request_clarification). */
export function yieldFields(
  state: Pick<ToolRunState, 'handoff' | 'clarification'>,
): Pick<StepResult, 'handoff' | 'clarification'> {
  return {
    ...(state.handoff ? { handoff: state.handoff } : {}),
    ...(state.clarification ? { clarification: state.clarification } : {}),
  };
}
