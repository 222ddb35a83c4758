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
    ...(outcome.status === 'ok' && outcome.sources ? { sources: outcome.sources } : {}),
  });
}

/** What the model reads of a tool's result: the data, without the sources kept for the author. */
export function forModel(outcome: ToolResult): ToolResult {
  if (outcome.status !== 'ok' || !outcome.sources) return outcome;
  const { sources: _sources, ...rest } = outcome;
  return rest;
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
