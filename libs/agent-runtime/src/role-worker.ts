import { ack, type Bus, type DeliveryContext, type Disposition, publishEnvelope } from '@quill/bus';
import {
  type ChatMessage,
  type ErrorCode,
  type FileWrite,
  frame,
  msgIds,
  StepRecordEnvelope,
  type StepResult,
  type TaskEnvelope,
  UsageEnvelope,
} from '@quill/contracts';
import { bumpRunEpoch, getRun, RunFencedError, saveFileContent, withRunFence } from '@quill/db';
import { LlmCallError, type LlmClient, quillErrorCodeFor } from '@quill/llm';
import { getStopFlag, type RedisClient, type RedisKeys } from '@quill/redis';
import { executeTool, type PendingFile, type ToolRunState, toolDefinitionsForRole } from '@quill/tools';
import type { Pool } from 'pg';
import type { Logger } from 'pino';
import { createStepEmitter, type EmitterSettings } from './frame-emitter.ts';
import { runModelTurn } from './model-turn.ts';

export interface RoleWorkerDependencies {
  bus: Bus;
  pool: Pool;
  redis: RedisClient;
  keys: RedisKeys;
  llm: LlmClient;
  logger: Logger;
  instanceId: string;
  /** The role's own instructions, sent as the run's last input message (seed 000 step 4). */
  directiveFor(task: TaskEnvelope): string;
  settings: EmitterSettings & { maxToolTurns: number; heartbeatMs: number };
}

/**
 * Handles one `task.<role>.<runId>` delivery: runs the role's model/tool loop, streams frames,
 * persists files under the run's write fence and reports a step result the router folds in.
 */
export function createRoleTaskHandler(dependencies: RoleWorkerDependencies) {
  const { bus, pool, logger } = dependencies;

  return async function handleTask(task: TaskEnvelope, delivery: DeliveryContext): Promise<Disposition> {
    const log = logger.child({ run_id: task.run_id, session_id: task.session_id, step: task.step });
    const run = await getRun(pool, task.run_id);
    if (run?.phase !== 'running') {
      log.info({ phase: run?.phase }, 'task for a run that is not running; dropped');
      return ack;
    }
    // A redelivered task means the previous holder may still be alive: take the write lease so
    // its late writes are fenced out.
    const epoch = delivery.deliveryCount > 1 ? await bumpRunEpoch(pool, task.run_id) : run.epoch;
    if (epoch === null) return ack;
    const heartbeat = setInterval(() => delivery.message.working(), dependencies.settings.heartbeatMs);
    try {
      const result = await runStep(task, epoch, delivery.deliveryCount, log);
      if (!result) return ack;
      await publishEnvelope(
        bus,
        bus.names.steps(task.run_id),
        StepRecordEnvelope,
        { v: 1, kind: 'result', run_id: task.run_id, result },
        { msgId: msgIds.stepResult(task.run_id, task.step) },
      );
      return ack;
    } finally {
      clearInterval(heartbeat);
    }
  };

  async function runStep(
    task: TaskEnvelope,
    epoch: number,
    attempt: number,
    log: Logger,
  ): Promise<StepResult | undefined> {
    const base = {
      step: task.step,
      role: task.role,
      worker_instance: dependencies.instanceId,
      files_written: [] as FileWrite[],
      model_calls: 0,
      tool_calls: 0,
      produced_prose_chars: 0,
      final_text: '',
    };
    if (await getStopFlag(dependencies.redis, dependencies.keys.stop(task.run_id))) {
      return { ...base, outcome: 'stopped', stop_reason: 'user_stopped' };
    }
    const emitter = createStepEmitter(
      bus,
      { runId: task.run_id, step: task.step, attempt, agent: task.role },
      dependencies.settings,
    );
    const state: ToolRunState = { pendingFile: undefined };
    const messages: ChatMessage[] = [
      ...task.messages,
      { role: 'user', content: dependencies.directiveFor(task) },
    ];
    const tools = toolDefinitionsForRole(task.role);
    const toolContext = {
      pool,
      runId: task.run_id,
      epoch,
      projectId: task.project_id,
      userId: task.user_id,
      role: task.role,
      state,
    };
    const saveFileBody = async (file: PendingFile, body: string): Promise<FileWrite | undefined> => {
      const version = await withRunFence(pool, { runId: task.run_id, epoch }, (client) =>
        saveFileContent(client, { fileId: file.fileId, content: body, source: 'ai', runId: task.run_id }),
      );
      return {
        file_id: file.fileId,
        title: file.title,
        file_type: file.fileType,
        version,
        body_chars: body.length,
      };
    };

    emitter.emit(frame('agent_start', task.run_id, { agent: task.role, step: task.step }));
    let finishReason = 'stop';
    let errorCode: ErrorCode | undefined;
    try {
      for (let turn = 0; turn < dependencies.settings.maxToolTurns; turn++) {
        const result = await runModelTurn(
          { llm: dependencies.llm, emitter, state, runId: task.run_id, role: task.role, saveFileBody },
          { messages, tools },
        );
        base.model_calls++;
        base.files_written.push(...result.filesWritten);
        base.final_text += result.text;
        finishReason = result.finishReason;
        await publishUsage(task, turn, attempt, result);
        if (result.toolCalls.length === 0) break;
        messages.push({ role: 'assistant', content: result.text || null, tool_calls: result.toolCalls });
        for (const call of result.toolCalls) {
          base.tool_calls++;
          const parsedArguments = safeJsonObject(call.function.arguments);
          emitter.emit(
            frame('tool_call', task.run_id, {
              agent: task.role,
              tool_call_id: call.id,
              tool_name: call.function.name,
              arguments: parsedArguments,
            }),
          );
          const outcome = await executeTool(
            call.function.name,
            call.function.arguments,
            toolContext,
            (error) => log.error({ err: error, tool: call.function.name }, 'tool failed unexpectedly'),
          );
          emitter.emit(
            frame('tool_result', task.run_id, {
              agent: task.role,
              tool_call_id: call.id,
              tool_name: call.function.name,
              status: outcome.status,
              ...(outcome.status === 'error' ? { error_type: outcome.error_type } : {}),
              summary: outcome.status === 'ok' ? outcome.summary : outcome.message,
            }),
          );
          messages.push({ role: 'tool', tool_call_id: call.id, content: JSON.stringify(outcome) });
        }
      }
    } catch (error) {
      if (error instanceof RunFencedError) {
        log.warn({ err: error }, 'write lease lost; step abandoned without a result');
        await emitter.close().catch(() => undefined);
        return undefined;
      }
      errorCode = error instanceof LlmCallError ? quillErrorCodeFor(error) : 'internal_error';
      log.error({ err: error, error_code: errorCode }, 'step failed');
    }
    emitter.emit(
      frame('message_end', task.run_id, {
        agent: task.role,
        stop_reason: errorCode ? 'error' : finishReason,
      }),
    );
    await emitter.close();
    base.produced_prose_chars = base.final_text.trim().length;
    return errorCode
      ? { ...base, outcome: 'failed', stop_reason: 'error', error_code: errorCode }
      : { ...base, outcome: 'completed', stop_reason: finishReason };
  }

  async function publishUsage(
    task: TaskEnvelope,
    turn: number,
    attempt: number,
    result: { usage: UsageEnvelope['usage']; provider: string; model: string },
  ) {
    const callIndex = task.step * 1000 + turn;
    await publishEnvelope(
      bus,
      bus.names.usage(task.run_id),
      UsageEnvelope,
      {
        v: 1,
        run_id: task.run_id,
        user_id: task.user_id,
        call_index: callIndex,
        attempt,
        role: task.role,
        provider: result.provider,
        model: result.model,
        usage: result.usage,
      },
      { msgId: msgIds.usage(task.run_id, callIndex, attempt), quiet: true },
    );
  }
}

function safeJsonObject(text: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(text);
    return value && typeof value === 'object' && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : {};
  } catch {
    return {};
  }
}
