import {
  type BillingDecision,
  ERROR_CATALOG,
  isErrorCode,
  type RunOutcome,
  type SseFrame,
  type WorkflowStoppedReason,
} from '@quill/contracts';
import type { RunOutput } from './run-output.ts';

/**
 * Charge or refund, decided from how the run ended and what it emitted (docs/agent-behaviour.md
 * 「流的终止、停止与计费」). Pure: the table-driven tests in services/billing/test cover every row.
 *
 * - author stop / client disconnect: refund when the round had no substantive output;
 * - wall-clock timeout: refund when no substantive output and not mid-reply at the end;
 * - runaway stops (no_progress, model-call cap, tool turns exhausted, agent-step cap): refund
 *   when no write succeeded (left body text); prose alone does not save a runaway round;
 * - normal completion (including a pause to ask the author a question, `waiting_user`): charge;
 * - error from Quill's own infrastructure (catalog `infrastructure`: internal_error,
 *   service_unavailable, context_unavailable, invalid_bus_message, worker_lost): refund, whatever
 *   was produced (README "Fault tolerance");
 * - other errors: charge when the error frame says refundable:false (e.g. the tool failure
 *   breaker), when output was already produced, or when a reply was being written; otherwise
 *   refund. (The router's `run_timeout` error therefore bills exactly like a wall-clock timeout
 *   stop; a model provider's failure after output charges, as the seed's rules say.)
 */
export type Ending =
  | { kind: 'complete' }
  | { kind: 'stopped'; reason: string }
  | { kind: 'error'; code: string; refundable: boolean; infrastructure: boolean };

type StopRule = 'interrupted' | 'timeout' | 'runaway' | 'completed';

/** Every stop reason has a rule; a new reason fails to compile until it is classified here. */
export const STOP_RULES: Record<WorkflowStoppedReason, StopRule> = {
  user_stopped: 'interrupted',
  client_disconnected: 'interrupted',
  wall_clock_timeout: 'timeout',
  no_progress: 'runaway',
  model_call_cap: 'runaway',
  tool_turns_exhausted: 'runaway',
  collaboration_cap: 'runaway',
  token_budget: 'runaway',
  repeated_task: 'runaway',
  // Not terminal; should a run ever end on it, the agent was blocked, not running away.
  read_only_handoff_blocked: 'interrupted',
  // The agent finished its turn by asking the author a question: a normal end of the round.
  waiting_user: 'completed',
};

export interface BillingVerdict {
  decision: BillingDecision;
  /** `<how the run ended>:<why this decision>`, e.g. `user_stopped:no_output`. */
  reason: string;
  producedOutput: boolean;
}

/**
 * How the run ended: its stored terminal frame when there is one (what the author saw), else
 * the outcome the caller reported (e.g. a launch that failed before any frame).
 */
export function endingOf(terminal: SseFrame | undefined, outcome: RunOutcome): Ending {
  if (terminal?.type === 'workflow_complete') return { kind: 'complete' };
  if (terminal?.type === 'workflow_stopped') return { kind: 'stopped', reason: terminal.reason };
  if (terminal?.type === 'error')
    return {
      kind: 'error',
      code: terminal.code,
      refundable: terminal.refundable,
      infrastructure: ERROR_CATALOG[terminal.code].infrastructure,
    };
  if (outcome.terminal === 'complete') return { kind: 'complete' };
  if (outcome.terminal === 'stopped') return { kind: 'stopped', reason: outcome.reason };
  const spec = isErrorCode(outcome.reason) ? ERROR_CATALOG[outcome.reason] : undefined;
  return {
    kind: 'error',
    code: outcome.reason,
    refundable: spec?.refundable ?? true,
    infrastructure: spec?.infrastructure ?? false,
  };
}

export function decideBilling(ending: Ending, output: RunOutput): BillingVerdict {
  const producedOutput = output.producedOutput;
  const verdict = (decision: BillingDecision, label: string, why: string): BillingVerdict => ({
    decision,
    reason: `${label}:${why}`,
    producedOutput,
  });

  if (ending.kind === 'complete') return verdict('charge', 'completed', 'completed');

  if (ending.kind === 'error') {
    // Quill's own failure is never the author's to pay, even after output (it may be lost or cut).
    if (ending.infrastructure) return verdict('refund', ending.code, 'infrastructure');
    if (!ending.refundable) return verdict('charge', ending.code, 'not_refundable');
    if (producedOutput) return verdict('charge', ending.code, 'produced_output');
    if (output.replyInProgress) return verdict('charge', ending.code, 'mid_reply');
    return verdict('refund', ending.code, 'no_output');
  }

  const rule = STOP_RULES[ending.reason as WorkflowStoppedReason] ?? 'interrupted';
  if (rule === 'completed') return verdict('charge', ending.reason, 'completed');
  if (rule === 'timeout') return timeoutVerdict(ending.reason);
  if (rule === 'runaway') {
    return output.wroteBody
      ? verdict('charge', ending.reason, 'wrote_body')
      : verdict('refund', ending.reason, 'no_write');
  }
  return producedOutput
    ? verdict('charge', ending.reason, 'produced_output')
    : verdict('refund', ending.reason, 'no_output');

  function timeoutVerdict(label: string): BillingVerdict {
    if (producedOutput) return verdict('charge', label, 'produced_output');
    if (output.replyInProgress) return verdict('charge', label, 'mid_reply');
    return verdict('refund', label, 'no_output');
  }
}
