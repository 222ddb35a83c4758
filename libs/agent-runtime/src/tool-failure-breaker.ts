import type { ToolResult } from '@quill/tools';

/**
 * Request-scoped tool failure circuit breaker (docs/agent-behaviour.md 「调了不存在的工具不致命」 and
 * [tool-failure-breaker]). A failed tool call is returned to the model so it can correct itself,
 * but a model that keeps calling a tool it cannot have is looping: the same unavailable tool
 * failing three times in a row opens the circuit and the step ends with
 * `tool_failure_circuit_open` (not refundable: the credits went into the loop).
 */
export const UNAVAILABLE_TOOL_ERRORS: readonly string[] = [
  'tool_not_found',
  'read_only_request',
  'clarify_first',
];
export const UNAVAILABLE_TOOL_THRESHOLD = 3;

export type BreakerReason = 'repeated_unavailable_tool_call';

/** The breaker's whole memory: the tool of the current streak, its length, and whether it opened. */
export interface BreakerState {
  streakTool: string | undefined;
  streak: number;
  open: boolean;
}

export const CLOSED_BREAKER: BreakerState = { streakTool: undefined, streak: 0, open: false };

/** The pure rule: the breaker after one call's outcome. */
export function recordToolOutcome(
  state: BreakerState,
  toolName: string,
  outcome: ToolResult,
  threshold = UNAVAILABLE_TOOL_THRESHOLD,
): BreakerState {
  const unavailable = outcome.status === 'error' && UNAVAILABLE_TOOL_ERRORS.includes(outcome.error_type);
  const streak = unavailable ? (state.streakTool === toolName ? state.streak + 1 : 1) : 0;
  return {
    streakTool: unavailable ? toolName : undefined,
    streak,
    open: state.open || streak >= threshold,
  };
}

export interface ToolFailureBreaker {
  /** Records one call's outcome; returns the reason once the circuit opens. */
  record(toolName: string, outcome: ToolResult): BreakerReason | undefined;
  readonly open: boolean;
}

/** The same rule with its state kept in a closure, for callers outside the step machine. */
export function createToolFailureBreaker(threshold = UNAVAILABLE_TOOL_THRESHOLD): ToolFailureBreaker {
  let state = CLOSED_BREAKER;
  return {
    record(toolName, outcome) {
      state = recordToolOutcome(state, toolName, outcome, threshold);
      return state.open ? 'repeated_unavailable_tool_call' : undefined;
    },
    get open() {
      return state.open;
    },
  };
}
