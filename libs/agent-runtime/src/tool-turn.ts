import { type AgentRole, type ChatMessage, frame, mergeSources, type ToolCall } from '@quill/contracts';
import { RunFencedError } from '@quill/db';
import { quillMetrics, withSpan } from '@quill/telemetry';
import { executeTool, TOOL_SPECS, type ToolContext, type ToolResult } from '@quill/tools';
import type { Logger } from 'pino';
import type { StepEmitter } from './frame-emitter.ts';
import { createNoProgressGuard } from './no-progress-guard.ts';
import { createToolFailureBreaker } from './tool-failure-breaker.ts';
import { createToolGate, type RequestScope, type ToolGate } from './tool-gate.ts';

/**
 * Why a step's loop ends early because of its tools. `yield`: the model handed off or asked the
 * author (the step completes and reports it); the others end the step with a stop reason.
 */
export type ToolStop =
  | { kind: 'yield' }
  | { kind: 'failed'; stopReason: 'tool_failure_circuit_open'; detail: string }
  | { kind: 'stopped'; stopReason: 'no_progress' | 'tool_turns_exhausted' };

export interface ToolTurnRunner {
  readonly gate: ToolGate;
  /**
   * Runs one model reply's tool calls in order: tool_call / tool_result frames keyed by
   * tool_call_id (docs/agent-behaviour.md 坑 12), a tool message per call, and the guards after each call.
   */
  run(
    calls: ToolCall[],
    messages: ChatMessage[],
    turn: { index: number; max: number },
  ): Promise<{ executed: number; stop: ToolStop | undefined }>;
}

export function createToolTurnRunner(options: {
  role: AgentRole;
  scope: RequestScope;
  context: ToolContext;
  emitter: StepEmitter;
  log: Logger;
}): ToolTurnRunner {
  const { role, context, emitter, log } = options;
  const gate = createToolGate(role, options.scope);
  const breaker = createToolFailureBreaker();
  const noProgress = createNoProgressGuard();

  const execute = async (call: ToolCall, turnIndex: number): Promise<ToolResult> => {
    const refused = gate.refuse(call.function.name, call.function.arguments);
    if (refused) return refused;
    const reportProgress = (progress: { completed: number; total: number; message: string }) =>
      emitter.emit(
        frame('tool_progress', context.runId, {
          agent: role,
          tool_call_id: call.id,
          tool_name: call.function.name,
          ...progress,
        }),
      );
    // One span per tool call, named by the GenAI conventions (`execute_tool <name>`).
    const outcome = await withSpan(
      `execute_tool ${call.function.name}`,
      {
        attributes: {
          'gen_ai.operation.name': 'execute_tool',
          'gen_ai.tool.name': call.function.name,
          'gen_ai.tool.call.id': call.id,
          'quill.run_id': context.runId,
          'quill.role': role,
        },
      },
      async (span) => {
        const result = await executeTool(
          call.function.name,
          call.function.arguments,
          // The call's writes carry this key, so a retry or a takeover never applies them twice.
          { ...context, reportProgress, callKey: `t${turnIndex}:${call.id}` },
          (error) => log.error({ err: error, tool: call.function.name }, 'tool failed unexpectedly'),
        );
        if (result.status === 'error') {
          // Answered to the model, not thrown: the span says so and the metric counts it.
          span.setAttribute('error.type', result.error_type);
          quillMetrics().toolErrors.add(1, { tool: call.function.name, error_type: result.error_type });
        }
        return result;
      },
    );
    // The lease is gone: this worker must not go on calling the model for a run it lost.
    if (outcome.status === 'error' && outcome.error_type === 'run_not_active') {
      throw new RunFencedError(context.runId, context.epoch, null, null);
    }
    return outcome;
  };

  return {
    gate,
    async run(calls, messages, turn) {
      let executed = 0;
      for (const call of calls) {
        executed++;
        emitter.emit(
          frame('tool_call', context.runId, {
            agent: role,
            tool_call_id: call.id,
            tool_name: call.function.name,
            arguments: jsonObject(call.function.arguments),
          }),
        );
        const outcome = await execute(call, turn.index);
        emitter.emit(
          frame('tool_result', context.runId, {
            agent: role,
            tool_call_id: call.id,
            tool_name: call.function.name,
            status: outcome.status,
            ...(outcome.status === 'error' ? { error_type: outcome.error_type } : {}),
            summary: outcome.status === 'ok' ? outcome.summary : outcome.message,
            ...(outcome.status === 'ok' && outcome.sources ? { sources: outcome.sources } : {}),
          }),
        );
        // Sources are collected here, from the tool, for the author; the model needs only the data.
        if (outcome.status === 'ok' && outcome.sources) {
          context.state.sources = mergeSources(context.state.sources, outcome.sources);
        }
        messages.push({ role: 'tool', tool_call_id: call.id, content: JSON.stringify(forModel(outcome)) });
        const tripped = breaker.record(call.function.name, outcome);
        if (tripped) {
          log.warn({ tool: call.function.name, reason: tripped }, 'tool failure circuit open');
          return {
            executed,
            stop: { kind: 'failed', stopReason: 'tool_failure_circuit_open', detail: tripped },
          };
        }
        if (noProgress.record(outcome, TOOL_SPECS[call.function.name]?.writesFiles === true)) {
          return { executed, stop: { kind: 'stopped', stopReason: 'no_progress' } };
        }
      }
      if (context.state.handoff || context.state.clarification) return { executed, stop: { kind: 'yield' } };
      // The model still wanted tools on the last turn the step allows.
      if (turn.index >= turn.max - 1) {
        return { executed, stop: { kind: 'stopped', stopReason: 'tool_turns_exhausted' } };
      }
      return { executed, stop: undefined };
    },
  };
}

function forModel(outcome: ToolResult): ToolResult {
  if (outcome.status !== 'ok' || !outcome.sources) return outcome;
  const { sources: _sources, ...rest } = outcome;
  return rest;
}

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
