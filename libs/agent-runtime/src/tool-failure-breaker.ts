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

export interface ToolFailureBreaker {
  /** Records one call's outcome; returns the reason once the circuit opens. */
  record(toolName: string, outcome: ToolResult): BreakerReason | undefined;
  readonly open: boolean;
}

export function createToolFailureBreaker(threshold = UNAVAILABLE_TOOL_THRESHOLD): ToolFailureBreaker {
  let streakTool: string | undefined;
  let streak = 0;
  let open = false;
  return {
    record(toolName, outcome) {
      if (outcome.status === 'error' && UNAVAILABLE_TOOL_ERRORS.includes(outcome.error_type)) {
        streak = streakTool === toolName ? streak + 1 : 1;
        streakTool = toolName;
      } else {
        streak = 0;
        streakTool = undefined;
      }
      if (streak >= threshold) open = true;
      return open ? 'repeated_unavailable_tool_call' : undefined;
    },
    get open() {
      return open;
    },
  };
}
