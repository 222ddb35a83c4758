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
} from '@quill/contracts';
import { bumpRunEpoch, getRun, RunFencedError, saveFileContent, withRunFence } from '@quill/db';
import { LlmCallError, type LlmClient, quillErrorCodeFor } from '@quill/llm';
import type { RedisClient, RedisKeys } from '@quill/redis';
import { type StopWatch, watchStop } from '@quill/run-control';
import { createToolRunState, type PendingFile, promoteReads } from '@quill/tools';
import type { Pool } from 'pg';
import type { Logger } from 'pino';
import { withChatHold } from './chat-hold.ts';
import { fileOperationsFromTranscript } from './file-operations.ts';
import { createStepEmitter, type EmitterSettings } from './frame-emitter.ts';
import { runModelTurn, saveOpenCapture } from './model-turn.ts';
import { createContinuationTracker } from './output-continuation.ts';
import { createModelCallBudget, softLanding } from './run-budget.ts';
import { drainSteering } from './steering.ts';
import { type StepStop, stepResultFor, stopReasonOf } from './step-outcome.ts';
import { createToolTurnRunner } from './tool-turn.ts';
import { createUsageReporter } from './usage-reporter.ts';

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
  settings: EmitterSettings & {
    maxToolTurns: number;
    heartbeatMs: number;
    /** Follow-up calls for a reply cut at the output limit (AGENT_MAX_OUTPUT_CONTINUATIONS). */
    maxOutputContinuations?: number;
    /** AGENT_RUN_MAX_MODEL_CALLS, counted run-wide in Redis; the counter expires after ttl. */
    maxRunModelCalls?: number;
    modelCallCounterTtlSeconds?: number;
    /** AGENT_SKILL_TOKEN_BUDGET: skill text one request may read (load_skill / read_skill_resource). */
    skillTokenBudget?: number;
  };
}

/**
 * Handles one `task.<role>.<runId>` delivery: runs the role's model/tool loop, streams frames,
 * persists files under the run's write fence and reports a step result the router folds in.
 */
export function createRoleTaskHandler(dependencies: RoleWorkerDependencies) {
  const { bus, pool, logger } = dependencies;

  return async function handleTask(task: TaskEnvelope, delivery: DeliveryContext): Promise<Disposition> {
    const log = logger.child({ run_id: task.run_id, session_id: task.session_id, step: task.step });
    // The stop watch opens while the run row is read: both are on the way to the first token.
    const [runRead, stopRead] = await Promise.allSettled([
      getRun(pool, task.run_id),
      watchStop(bus, dependencies.redis, dependencies.keys, task.run_id),
    ]);
    if (stopRead.status === 'rejected') throw stopRead.reason;
    const stopWatch = stopRead.value;
    try {
      if (runRead.status === 'rejected') throw runRead.reason;
      const run = runRead.value;
      if (run?.phase !== 'running') {
        log.info({ phase: run?.phase }, 'task for a run that is not running; dropped');
        return ack;
      }
      // A redelivered task means the previous holder may still be alive: take the write lease so
      // its late writes are fenced out.
      const epoch = delivery.deliveryCount > 1 ? await bumpRunEpoch(pool, task.run_id) : run.epoch;
      if (epoch === null) return ack;
      log.info({ role: task.role, delivery: delivery.deliveryCount }, 'step started');
      const heartbeat = setInterval(() => delivery.message.working(), dependencies.settings.heartbeatMs);
      try {
        const result = await runStep(task, epoch, delivery.deliveryCount, log, stopWatch);
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
    } finally {
      stopWatch.close();
    }
  };

  async function runStep(
    task: TaskEnvelope,
    epoch: number,
    attempt: number,
    log: Logger,
    stopWatch: StopWatch,
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
    const stoppedBefore = stopWatch.reason();
    if (stoppedBefore) return { ...base, outcome: 'stopped', stop_reason: stoppedBefore };
    return await runTurns(task, epoch, attempt, log, base, stopWatch);
  }

  async function runTurns(
    task: TaskEnvelope,
    epoch: number,
    attempt: number,
    log: Logger,
    base: Omit<StepResult, 'outcome' | 'stop_reason'>,
    stopWatch: StopWatch,
  ): Promise<StepResult | undefined> {
    // CHAT_HOLD (workflow issue): chat text after a body write is held back when the task says so.
    const emitter = withChatHold(
      createStepEmitter(
        bus,
        { runId: task.run_id, step: task.step, attempt, agent: task.role },
        dependencies.settings,
      ),
      { holdChat: task.hold_chat === true },
    );
    const state = createToolRunState();
    const messages: ChatMessage[] = [
      ...task.messages,
      { role: 'user', content: dependencies.directiveFor(task) },
    ];
    const toolContext = {
      pool,
      runId: task.run_id,
      epoch,
      projectId: task.project_id,
      userId: task.user_id,
      role: task.role,
      state,
      ...(dependencies.settings.skillTokenBudget
        ? { skillTokenBudget: dependencies.settings.skillTokenBudget }
        : {}),
    };
    // Tool calls run through the request's scope, the failure breaker and the no-progress guard.
    const toolTurns = createToolTurnRunner({
      role: task.role,
      scope: { readOnly: task.read_only === true, clarifyFirst: task.clarify_first === true },
      context: toolContext,
      emitter,
      log,
    });
    const tools = toolTurns.gate.tools;
    const modelCalls = createModelCallBudget(dependencies.redis, dependencies.keys, task.run_id, {
      maxRunModelCalls: dependencies.settings.maxRunModelCalls ?? 120,
      counterTtlSeconds: dependencies.settings.modelCallCounterTtlSeconds ?? 86_400,
    });
    let stepStop: StepStop | undefined;
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
    const usage = createUsageReporter(bus, task, attempt, log);
    const continuation = createContinuationTracker(dependencies.settings.maxOutputContinuations ?? 3);
    const turnDependencies = { emitter, state, runId: task.run_id, saveFileBody };
    try {
      for (let turn = 0; turn < dependencies.settings.maxToolTurns; turn++) {
        if (stopWatch.signal.aborted) break;
        // Both are on the way to the model call, and neither needs the other: one round trip.
        const [, allowed] = await Promise.all([
          drainSteering(dependencies.redis, dependencies.keys, task.run_id, messages, emitter, task.role),
          modelCalls.take(),
        ]);
        if (!allowed) {
          stepStop = { kind: 'stopped', stopReason: 'model_call_cap' };
          break;
        }
        softLanding(turn, dependencies.settings.maxToolTurns, messages);
        // What the tools returned before this call is now in the model's input.
        promoteReads(state);
        const result = await runModelTurn(
          {
            llm: dependencies.llm,
            emitter,
            state,
            runId: task.run_id,
            role: task.role,
            saveFileBody,
            signal: stopWatch.signal,
            sessionId: task.session_id,
            onAttempt: usage.hookFor(turn),
          },
          { messages, tools, ...continuation.nextCall() },
        );
        base.model_calls++;
        base.files_written.push(...result.filesWritten);
        base.final_text += result.text;
        finishReason = result.finishReason;
        await usage.flush();
        if (result.toolCalls.length === 0) {
          if (continuation.continueAfter(result, messages)) continue;
          break;
        }
        messages.push({ role: 'assistant', content: result.text || null, tool_calls: result.toolCalls });
        const ran = await toolTurns.run(result.toolCalls, messages, {
          index: turn,
          max: dependencies.settings.maxToolTurns,
        });
        base.tool_calls += ran.executed;
        if (ran.stop) {
          stepStop = ran.stop;
          break;
        }
      }
      // A body a truncated reply left open is saved even when no continuation followed it.
      const leftOpen = continuation.takeOpenCapture();
      if (leftOpen) {
        const write = await saveOpenCapture(turnDependencies, leftOpen);
        if (write) base.files_written.push(write);
      }
    } catch (error) {
      if (error instanceof RunFencedError) {
        log.warn({ err: error }, 'write lease lost; step abandoned without a result');
        await emitter.close().catch(() => undefined);
        return undefined;
      }
      if (!stopWatch.signal.aborted) {
        errorCode = error instanceof LlmCallError ? quillErrorCodeFor(error) : 'internal_error';
        log.error({ err: error, error_code: errorCode }, 'step failed');
      }
    }
    // Failed attempts are billed evidence too: their usage goes out whatever ended the step.
    await usage.flush().catch((error: unknown) => log.error({ err: error }, 'usage report failed'));
    const stoppedWith = stopWatch.reason();
    emitter.emit(
      frame('message_end', task.run_id, {
        agent: task.role,
        stop_reason: stoppedWith ?? (errorCode ? 'error' : stopReasonOf(stepStop, finishReason)),
      }),
    );
    await emitter.close();
    base.produced_prose_chars = base.final_text.trim().length;
    Object.assign(base, emitter.report());
    // Breadcrumbs for the next turn (context issue): what this step did to which file.
    base.file_operations = fileOperationsFromTranscript(messages, base.files_written);
    if (stoppedWith) return { ...base, outcome: 'stopped', stop_reason: stoppedWith };
    return errorCode
      ? { ...base, outcome: 'failed', stop_reason: 'error', error_code: errorCode }
      : stepResultFor(base, stepStop, finishReason, state);
  }
}
