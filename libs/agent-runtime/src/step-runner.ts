import {
  type ChatMessage,
  type ErrorCode,
  frame,
  type StepResult,
  type TaskEnvelope,
} from '@quill/contracts';
import { deleteEmptyFiles, isTransientDbError, RunFencedError, withRunFence } from '@quill/db';
import { LlmCallError, quillErrorCodeFor } from '@quill/llm';
import type { StopWatch } from '@quill/run-control';
import { createToolRunState, promoteReads } from '@quill/tools';
import type { Logger } from 'pino';
import { withAuthorTextShaping } from './author-text-shaper.ts';
import { withChatHold } from './chat-hold.ts';
import { createEmptyFileRound } from './empty-file-round.ts';
import { fileOperationsFromTranscript } from './file-operations.ts';
import { createStepEmitter } from './frame-emitter.ts';
import { fileSavedFrame, partialReasonForStop, runModelTurn, saveOpenCapture } from './model-turn.ts';
import { createContinuationTracker } from './output-continuation.ts';
import type { RoleWorkerDependencies } from './role-worker.ts';
import { createModelCallBudget, softLanding } from './run-budget.ts';
import { drainSteering } from './steering.ts';
import { restoreToolState, type StepJournalData, writeStepJournal } from './step-journal.ts';
import { type StepStop, stepResultFor, stopReasonOf } from './step-outcome.ts';
import { createStepProgress, type StepBase } from './step-progress.ts';
import { createToolTurnRunner } from './tool-turn.ts';
import { createUsageReporter } from './usage-reporter.ts';

export interface StepRun {
  task: TaskEnvelope;
  epoch: number;
  /** The task's delivery count: frames and usage of each delivery have their own ids. */
  attempt: number;
  log: Logger;
  stopWatch: StopWatch;
  /** Where the previous holder of this step stood, when it left a journal. */
  journal: StepJournalData | null;
  /**
   * Fires when this replica shuts down and the drain window is over: the step stops at its last
   * checkpoint (the model call in progress is dropped, not saved) and is handed back.
   */
  handBack?: AbortSignal;
}

/**
 * The role's model/tool loop for one step, journaled after every turn and every body save so a
 * worker that takes the step over continues from there (docs/ai-writes.md). Returns undefined
 * when the write lease was lost (another worker owns the step now).
 */
export async function runStepTurns(
  dependencies: RoleWorkerDependencies,
  run: StepRun,
): Promise<StepResult | 'handed_back' | undefined> {
  const { pool } = dependencies;
  const { task, epoch, attempt, log, stopWatch, journal } = run;
  const handBack = run.handBack;
  // One signal for the model stream: an author stop or a hand-back (a plain controller, not
  // AbortSignal.any, which the stream would re-walk on every chunk).
  const modelAbort = new AbortController();
  const abortModel = () => modelAbort.abort();
  stopWatch.signal.addEventListener('abort', abortModel, { once: true });
  handBack?.addEventListener('abort', abortModel, { once: true });
  if (stopWatch.signal.aborted || handBack?.aborted) modelAbort.abort();
  const runId = task.run_id;
  const fence = { runId, epoch, retryMs: dependencies.settings.writeRetryMs ?? 30_000 };
  // Shaping sits under the chat hold: held text stays the raw suffix of final_text, which is how
  // the router cuts a discarded summary out of the stored reply (held-text.ts).
  const emitter = withChatHold(
    withAuthorTextShaping(
      createStepEmitter(
        bus(dependencies),
        { runId, step: task.step, attempt, agent: task.role },
        dependencies.settings,
      ),
      { authorLanguage: task.author_language },
    ),
    { holdChat: task.hold_chat === true, ...(journal ? { resume: journal.hold } : {}) },
  );
  const state = createToolRunState();
  if (journal) await restoreToolState(pool, state, journal);
  const prefix: ChatMessage[] = [
    ...task.messages,
    { role: 'user', content: await dependencies.directiveFor(task) },
  ];
  const messages: ChatMessage[] = [...prefix, ...(journal?.messages ?? [])];
  const base: StepBase = {
    step: task.step,
    role: task.role,
    worker_instance: dependencies.instanceId,
    files_written: [...(journal?.files_written ?? [])],
    model_calls: journal?.model_calls ?? 0,
    tool_calls: journal?.tool_calls ?? 0,
    produced_prose_chars: 0,
    final_text: journal?.final_text ?? '',
  };
  const continuation = createContinuationTracker(
    dependencies.settings.maxOutputContinuations ?? 3,
    journal ? { used: journal.continuations_used, open: journal.open_capture } : undefined,
  );
  const correction = createEmptyFileRound({
    enabled: task.read_only !== true,
    ...(journal ? { corrected: journal.corrected } : {}),
  });
  const progress = createStepProgress({
    pool,
    fence,
    task,
    journal,
    prefixLength: prefix.length,
    messages,
    base,
    state,
    emitter,
    continuation,
    correction,
  });
  const { saveFileBody } = progress;
  const checkpoint = progress.checkpoint;

  const toolTurns = createToolTurnRunner({
    role: task.role,
    scope: { readOnly: task.read_only === true, clarifyFirst: task.clarify_first === true },
    context: {
      pool,
      runId,
      epoch,
      step: task.step,
      writeRetryMs: fence.retryMs,
      projectId: task.project_id,
      userId: task.user_id,
      role: task.role,
      state,
      ...(dependencies.settings.skillTokenBudget
        ? { skillTokenBudget: dependencies.settings.skillTokenBudget }
        : {}),
    },
    emitter,
    log,
  });
  const modelCalls = createModelCallBudget(dependencies.redis, dependencies.keys, runId, {
    maxRunModelCalls: dependencies.settings.maxRunModelCalls ?? 120,
    counterTtlSeconds: dependencies.settings.modelCallCounterTtlSeconds ?? 86_400,
  });
  const usage = createUsageReporter(bus(dependencies), task, attempt, log);
  const turnDependencies = { emitter, state, runId, saveFileBody };
  let stepStop: StepStop | undefined;
  let errorCode: ErrorCode | undefined;
  let removedEmpty = false;

  if (journal || attempt > 1) {
    // What the previous holder finished stands; the frames of its unfinished call are void.
    emitter.emit(
      frame('step_resumed', runId, {
        agent: task.role,
        step: task.step,
        resumed_turn: progress.turn,
        valid_through_id: progress.validThroughId,
      }),
    );
    for (const write of journal?.unannounced ?? []) emitter.emit(fileSavedFrame(runId, write));
  }
  if (!journal) emitter.emit(frame('agent_start', runId, { agent: task.role, step: task.step }));

  try {
    for (; !progress.loopDone && progress.turn < dependencies.settings.maxToolTurns; progress.turn++) {
      if (stopWatch.signal.aborted || handBack?.aborted) break;
      const [steered, allowed] = await Promise.all([
        drainSteering(dependencies.redis, dependencies.keys, runId, messages, emitter, task.role),
        modelCalls.take(),
      ]);
      // A drained interjection exists nowhere else now: keep it through a takeover.
      if (steered > 0) await checkpoint();
      if (!allowed) {
        stepStop = { kind: 'stopped', stopReason: 'model_call_cap' };
        break;
      }
      softLanding(progress.turn, dependencies.settings.maxToolTurns, messages);
      promoteReads(state);
      progress.inModelCall = true;
      const result = await runModelTurn(
        {
          llm: dependencies.llm,
          emitter,
          state,
          runId,
          role: task.role,
          saveFileBody,
          signal: modelAbort.signal,
          stopReason: () => stopWatch.reason(),
          abandoned: () => handBack?.aborted === true && !stopWatch.signal.aborted,
          sessionId: task.session_id,
          onAttempt: usage.hookFor(progress.turn),
        },
        { messages, tools: toolTurns.gate.tools, ...continuation.nextCall() },
      ).finally(() => {
        progress.inModelCall = false;
      });
      // A call cut to hand the step back is redone by the next worker: nothing of it counts here.
      if (handBack?.aborted && !stopWatch.signal.aborted) return await handedBack();
      progress.unannounced = [];
      base.model_calls++;
      correction.observe(result);
      base.files_written.push(...result.filesWritten);
      base.final_text += result.text;
      progress.finishReason = result.finishReason;
      await usage.flush();
      if (result.toolCalls.length === 0) {
        if (continuation.continueAfter(result, messages) || correction.due(state, result, messages, true)) {
          await checkpoint({ turn: progress.turn + 1 });
          continue;
        }
        progress.loopDone = true;
        await checkpoint({ turn: progress.turn + 1 });
        break;
      }
      messages.push({ role: 'assistant', content: result.text || null, tool_calls: result.toolCalls });
      const ran = await toolTurns.run(result.toolCalls, messages, {
        index: progress.turn,
        max: dependencies.settings.maxToolTurns,
      });
      base.tool_calls += ran.executed;
      for (const notice of result.notices) messages.push({ role: 'user', content: notice });
      if (ran.stop && !(ran.stop.kind === 'yield' && correction.due(state, result, messages, false))) {
        stepStop = ran.stop;
        progress.loopDone = true;
        await checkpoint({ turn: progress.turn + 1 });
        break;
      }
      await checkpoint({ turn: progress.turn + 1 });
    }
    if (handBack?.aborted && !stopWatch.signal.aborted) return await handedBack();
    // A body a truncated reply left open is saved even when no continuation followed it.
    const leftOpen = continuation.takeOpenCapture();
    if (leftOpen) {
      const stopped = stopWatch.reason();
      const write = await saveOpenCapture(
        turnDependencies,
        leftOpen,
        stopped ? partialReasonForStop(stopped) : 'output_limit',
      );
      if (write) base.files_written.push(write);
    }
    removedEmpty = await removeUnwrittenFile();
  } catch (error) {
    if (error instanceof RunFencedError) {
      log.warn({ err: error }, 'write lease lost; step abandoned without a result');
      await emitter.close().catch(() => undefined);
      return undefined;
    }
    if (handBack?.aborted && !stopWatch.signal.aborted) return await handedBack();
    if (!stopWatch.signal.aborted) {
      errorCode =
        error instanceof LlmCallError
          ? quillErrorCodeFor(error)
          : isTransientDbError(error)
            ? 'storage_unavailable'
            : 'internal_error';
      log.error({ err: error, error_code: errorCode }, 'step failed');
    }
  }

  /** The journal stands at the last finished turn; the frames since are voided by the taker. */
  async function handedBack(): Promise<'handed_back'> {
    // Usage of the dropped call is billed evidence like any other attempt's: it goes out first.
    await usage.flush().catch((error: unknown) => log.error({ err: error }, 'usage report failed'));
    await emitter.close().catch(() => undefined);
    return 'handed_back';
  }

  // The correction round did not bring the body: the empty file goes, and a step that wrote
  // nothing else did not do what it was asked (docs/ai-writes.md).
  async function removeUnwrittenFile(): Promise<boolean> {
    const pending = state.pendingFile;
    if (!pending || stopWatch.signal.aborted || (stepStop && stepStop.kind !== 'yield')) return false;
    const removed = await withRunFence(pool, fence, (client) =>
      deleteEmptyFiles(client, task.project_id, [pending.fileId]),
    );
    state.pendingFile = undefined;
    if (removed.length === 0) return false;
    state.writtenFileIds.delete(pending.fileId);
    emitter.emit(
      frame('file_removed', runId, {
        agent: task.role,
        file_id: pending.fileId,
        title: pending.title,
        reason: 'empty_file_unwritten',
      }),
    );
    log.warn({ file_id: pending.fileId }, 'created file left empty after its correction round; removed');
    return true;
  }

  // Failed attempts are billed evidence too: their usage goes out whatever ended the step.
  await usage.flush().catch((error: unknown) => log.error({ err: error }, 'usage report failed'));
  const stoppedWith = stopWatch.reason();
  if (!errorCode && removedEmpty && base.files_written.length === 0 && state.writtenFileIds.size === 0) {
    errorCode = 'empty_file_unwritten';
  }
  // A step that ends empty_file_unwritten finished its replies; only a cut reply ends in 'error'.
  const replyCut = errorCode !== undefined && errorCode !== 'empty_file_unwritten';
  emitter.emit(
    frame('message_end', runId, {
      agent: task.role,
      stop_reason: stoppedWith ?? (replyCut ? 'error' : stopReasonOf(stepStop, progress.finishReason)),
    }),
  );
  await emitter.close();
  base.produced_prose_chars = base.final_text.trim().length;
  Object.assign(base, emitter.report());
  base.file_operations = fileOperationsFromTranscript(messages, base.files_written);
  const result: StepResult = stoppedWith
    ? { ...base, outcome: 'stopped', stop_reason: stoppedWith }
    : errorCode
      ? { ...base, outcome: 'failed', stop_reason: 'error', error_code: errorCode }
      : stepResultFor(base, stepStop, progress.finishReason, state);
  // Only a takeover reads this: if recording it fails, the result still goes to the router.
  await withRunFence(pool, { ...fence, retryMs: 0 }, (client) =>
    writeStepJournal(client, runId, task.step, progress.snapshot({ loop_done: true, result })),
  ).catch((error: unknown) => log.warn({ err: error }, 'step result not journaled'));
  return result;
}

const bus = (dependencies: RoleWorkerDependencies) => dependencies.bus;
