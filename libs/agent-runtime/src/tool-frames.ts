import { frame, type ToolCall } from '@quill/contracts';
import type { ToolResult } from '@quill/tools';
import type { StepConfig } from './step-state.ts';

/**
 * The author's frames of one tool call, keyed by tool_call_id so the card pairs them
 * (docs/agent-behaviour.md 坑 12).
 */
export function toolCallFrame(config: Pick<StepConfig, 'runId' | 'role'>, call: ToolCall) {
  return frame('tool_call', config.runId, {
    agent: config.role,
    tool_call_id: call.id,
    tool_name: call.function.name,
    arguments: jsonObject(call.function.arguments),
  });
}

export function toolResultFrame(
  config: Pick<StepConfig, 'runId' | 'role'>,
  call: ToolCall,
  outcome: ToolResult,
) {
  return frame('tool_result', config.runId, {
    agent: config.role,
    tool_call_id: call.id,
    tool_name: call.function.name,
    status: outcome.status,
    ...(outcome.status === 'error' ? { error_type: outcome.error_type } : {}),
    summary: outcome.status === 'ok' ? outcome.summary : outcome.message,
  });
}

/** The arguments as an object for the card; arguments that are not a JSON object show as none. */
function jsonObject(text: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(text);
    return value && typeof value === 'object' && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : {};
  } catch {
    return {};
  }
}
