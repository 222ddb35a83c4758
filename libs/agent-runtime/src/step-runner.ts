import type { ChatMessage, StepResult, TaskEnvelope } from '@quill/contracts';
import { withRunFence } from '@quill/db';
import { deleteEmptyFiles } from '@quill/db/workers';
import type { FirstAdmission } from '@quill/llm';
import type { StopWatch } from '@quill/run-control';
import { createToolRunState, promoteReads, TOOL_SPECS } from '@quill/tools';
import type { Logger } from 'pino';
import { withAuthorTextShaping } from './author-text-shaper.ts';
import { withChatHold } from './chat-hold.ts';
import { createStepEmitter } from './frame-emitter.ts';
import { createHistoryArchiveWrite } from './history-archive.ts';
import { runModelTurn, saveOpenCapture } from './model-turn.ts';
import type { AppliedDefinition } from './role-definition.ts';
import type { RoleWorkerDependencies } from './role-worker.ts';
import { createTokenBudget, createTurnOpener } from './run-budget.ts';
import { restoreToolState, type StepJournalData } from './step-journal.ts';
import { createStepStore } from './step-progress.ts';
import { driveStep, type StepPorts } from './step-shell.ts';
import { initialStepState, type StepConfig, type StepState } from './step-state.ts';
import { createToolExecutor } from './tool-turn.ts';
import { createUsageReporter } from './usage-reporter.ts';

export interface StepRun {
  task: TaskEnvelope;
  /** The step's compiled context (context.compile, asked by the worker for this task). */
  messages: ChatMessage[];
  /** Whether the session's history was ever compacted, as the compile said; undefined: not known. */
  historyCompacted?: boolean;
  /** The role definition the step runs with (its session's pin). */
  definition: AppliedDefinition;
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
  const { pool, settings } = dependencies;
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
  const fence = { runId, epoch, retryMs: settings.writeRetryMs };
  // Shaping sits under the chat hold: held text stays the raw suffix of final_text, which is how
  // the router cuts a discarded summary out of the stored reply (held-text.ts).
  const emitter = withChatHold(
    withAuthorTextShaping(
      createStepEmitter(dependencies.bus, { runId, step: task.step, attempt, agent: task.role }, settings),
      { authorLanguage: task.author_language },
    ),
    { holdChat: task.hold_chat === true, ...(journal ? { resume: journal.hold } : {}) },
  );
  const tools = createToolRunState();
  if (journal) await restoreToolState(pool, tools, journal);
  const { definition } = run;
  const prefix: ChatMessage[] = [...run.messages, { role: 'user', content: definition.prompt }];
  const config: StepConfig = {
    runId,
    role: task.role,
    step: task.step,
    workerInstance: dependencies.instanceId,
    maxTurns: definition.maxToolTurns,
    maxContinuations: definition.maxOutputContinuations,
    correctionEnabled: task.read_only !== true,
    maxRunTokens: settings.maxRunTokens,
  };
  let current: StepState = initialStepState([...prefix, ...(journal?.messages ?? [])], journal);
  const store = createStepStore({
    pool,
    fence,
    task,
    validThroughId: journal?.valid_through_id ?? 0,
    prefixLength: prefix.length,
    current: () => current,
    tools,
    emitter,
  });
  const executor = createToolExecutor({
    role: task.role,
    scope: { readOnly: task.read_only === true, clarifyFirst: task.clarify_first === true },
    tools: definition.tools,
    context: {
      pool,
      runId,
      epoch,
      step: task.step,
      writeRetryMs: fence.retryMs,
      projectId: task.project_id,
      userId: task.user_id,
      role: task.role,
      state: tools,
      toolNames: definition.tools,
      ...(definition.skillTokenBudget ? { skillTokenBudget: definition.skillTokenBudget } : {}),
    },
    emitter,
    log,
  });
  const turns = createTurnOpener(dependencies.redis, dependencies.keys, runId, {
    maxRunModelCalls: settings.maxRunModelCalls,
    counterTtlSeconds: settings.modelCallCounterTtlSeconds,
  });
  const tokens = createTokenBudget(dependencies.redis, dependencies.keys, runId, {
    counterTtlSeconds: settings.modelCallCounterTtlSeconds,
  });
  const usage = createUsageReporter(dependencies.bus, task, attempt, log);
  const turnDependencies = { emitter, state: tools, runId, saveFileBody: store.saveFileBody };
  const archive = createHistoryArchiveWrite(pool, task, log, { compacted: run.historyCompacted });

  // The call a turn opens has its first admission (the session's pin and that provider's breaker)
  // read while the turn opens, not after it: two Redis round trips at once on the way to the
  // model's request (docs/decisions/0068-a-calls-admission-read-with-its-turn.md).
  let admission: Promise<FirstAdmission> | undefined;
  const ports: StepPorts = {
    model: {
      call(request) {
        const readAhead = admission;
        admission = undefined;
        const turn = runModelTurn(
          {
            llm: dependencies.llm,
            emitter,
            state: tools,
            runId,
            role: task.role,
            saveFileBody: store.saveFileBody,
            signal: modelAbort.signal,
            stopReason: () => stopWatch.reason(),
            abandoned: () => handBack?.aborted === true && !stopWatch.signal.aborted,
            sessionId: task.session_id,
            ...(readAhead ? { admission: readAhead } : {}),
            targets: definition.targets,
            ...(definition.maxOutputTokens === undefined
              ? {}
              : { maxOutputTokens: definition.maxOutputTokens }),
            onAttempt: usage.hookFor(request.turn),
          },
          {
            messages: request.messages as ChatMessage[],
            tools: executor.gate.tools,
            ...(request.resume ? { resume: request.resume } : {}),
            keepOpenOnLength: request.keepOpenOnLength,
          },
        );
        archive.start();
        return turn;
      },
    },
    store: {
      checkpoint: (state) => store.checkpoint(state),
      journalResult: (state, result) => store.journalResult(state, result),
      saveOpenCapture: (capture, reason) => saveOpenCapture(turnDependencies, capture, reason),
      async removeEmptyFile(file) {
        const removed = await withRunFence(pool, fence, (client) =>
          deleteEmptyFiles(client, task.project_id, [file.fileId]),
        );
        tools.pendingFile = undefined;
        if (removed.length === 0) return false;
        tools.writtenFileIds.delete(file.fileId);
        return true;
      },
    },
    frames: {
      emit: (value) => emitter.emit(value),
      close: () => emitter.close(),
      report: () => emitter.report(),
    },
    signals: {
      read: () => ({ stopReason: stopWatch.reason(), handBack: handBack?.aborted === true }),
      openTurn: () => {
        admission = dependencies.llm.readAdmission?.(task.session_id);
        return turns.open();
      },
      spendTokens: (count) => tokens.spend(count),
    },
    tools: {
      view: () => ({
        pendingFile: tools.pendingFile,
        yielded: {
          handoff: tools.handoff,
          clarification: tools.clarification,
          sources: tools.sources,
          authorQuestions: tools.authorQuestions,
        },
        writtenFiles: tools.writtenFileIds.size,
      }),
      promoteReads: () => promoteReads(tools),
      async execute(call, turn) {
        await archive.settled();
        const outcome = await executor.execute(call, turn);
        return { outcome, writesFiles: TOOL_SPECS[call.function.name]?.writesFiles === true };
      },
    },
    usage,
    log,
  };

  try {
    return await driveStep(
      config,
      ports,
      current,
      {
        resumed: journal !== null || attempt > 1,
        fresh: journal === null,
        validThroughId: store.validThroughId,
        unannounced: journal?.unannounced ?? [],
      },
      (state) => {
        current = state;
      },
    );
  } finally {
    await archive.settled();
    stopWatch.signal.removeEventListener('abort', abortModel);
    handBack?.removeEventListener('abort', abortModel);
  }
}
