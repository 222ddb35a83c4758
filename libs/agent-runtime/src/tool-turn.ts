import { type AgentRole, frame, mergeSources, type ToolCall } from '@quill/contracts';
import { RunFencedError } from '@quill/db';
import { quillMetrics, withSpan } from '@quill/telemetry';
import { executeTool, type ToolContext, type ToolResult } from '@quill/tools';
import type { Logger } from 'pino';
import type { StepEmitter } from './frame-emitter.ts';
import { createToolGate, type RequestScope, type ToolGate } from './tool-gate.ts';

/**
 * Why a step's loop ends early because of its tools. `yield`: the model handed off or asked the
 * author (the step completes and reports it); the others end the step with a stop reason.
 */
export type ToolStop =
  | { kind: 'yield' }
  | { kind: 'failed'; stopReason: 'tool_failure_circuit_open'; detail: string }
  | { kind: 'stopped'; stopReason: 'no_progress' | 'tool_turns_exhausted' };

/**
 * The step machine's tool port: one call through the request's gate and its span. The guards
 * after each call (breaker, no-progress, the turn cap) are rules of step-machine.ts.
 */
export interface ToolExecutor {
  readonly gate: ToolGate;
  execute(call: ToolCall, turnIndex: number): Promise<ToolResult>;
}

export function createToolExecutor(options: {
  role: AgentRole;
  scope: RequestScope;
  /** The step's tool set (its pinned definition's); the role's whole set when unset. */
  tools?: readonly string[];
  context: ToolContext;
  emitter: StepEmitter;
  log: Logger;
}): ToolExecutor {
  const { role, context, emitter, log } = options;
  const gate = createToolGate(role, options.scope, options.tools);

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
    // Sources are collected here, from the tool, for the author; the model needs only the data
    // (docs/protocol.md, sources).
    if (outcome.status === 'ok' && outcome.sources) {
      context.state.sources = mergeSources(context.state.sources, outcome.sources);
    }
    return outcome;
  };

  return { gate, execute };
}
