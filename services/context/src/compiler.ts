import type { ContextCompileReply, ContextCompileRequest, TokenUsage } from '@quill/contracts';
import {
  getLatestCompaction,
  getProject,
  getProjectTaskBoard,
  insertContextTrace,
  listEnabledSkills,
  listFileSummaries,
  listHistoryMessages,
  listRunWrittenFileIds,
} from '@quill/db';
import { estimateTextTokens } from '@quill/llm';
import { type AssembledContext, assembleContext } from './assembler.ts';
import { historyAllowance, type TokenCounter } from './budget.ts';
import { chosenSkillBlocks, chosenSkillNames } from './chosen-skills.ts';
import { ARCHIVE_FILE_TYPE, type CompactionDependencies } from './compaction.ts';
import { buildHistoryWindow } from './history-window.ts';
import { partitionByVisibility } from './isolation.ts';
import { languageLine, replyLanguage, systemPrompt } from './prompts.ts';
import { renderTurnContext, renderUserMessage, renderWorkingSet } from './render.ts';
import { renderTaskBoard } from './task-board.ts';
import { buildTrace } from './trace.ts';
import { buildWorkingSet, type WorkingSetSettings } from './working-set.ts';

export interface CompilerSettings {
  contextTokens: number;
  historyTokens: number;
  /** The request ledger's ceiling (already capped at the model's input window). */
  ledgerCeiling: number;
  skillTokens: number;
  workingSet: WorkingSetSettings;
  compactionEnabled: boolean;
}

export interface CompilerDependencies extends Omit<CompactionDependencies, 'onUsage'> {
  settings: CompilerSettings;
  count?: TokenCounter;
  /** Reports the usage of a compaction summary made for this request (billing counts it). */
  onSummaryUsage?: (
    request: ContextCompileRequest,
    usage: TokenUsage,
    provider: string,
    model: string,
  ) => Promise<void>;
}

// Enough recent messages to find the last two assistant replies for the working set.
const RECENT_MESSAGES = 12;

/**
 * The fixed lines every compile counts (system prompt with and without a skill catalog, the turn
 * context's headings and language lines). Counted once at start-up into the tokenizer's paragraph
 * cache (@quill/llm), the first compile after a start tokenises only what is its own.
 */
export function fixedPromptTexts(): string[] {
  const project = { title: '', projectType: '' };
  const turn = (language: 'zh' | 'en') =>
    renderTurnContext({
      narrativeConstraints: '-',
      chosenSkills: ['-'],
      projectContext: '-',
      currentFile: '-',
      taskBoard: '-',
      languageLine: languageLine(language),
    });
  return [
    systemPrompt(project),
    systemPrompt(project, [{ name: '-', description: '-' }]),
    turn('zh'),
    turn('en'),
  ];
}

/**
 * The Context Compiler (docs/agent-behaviour.md): decides what a role sees for one step — under token
 * budgets and visibility rules — lays it out cache-stably as [system][history][turn], and
 * records a Context Trace of everything loaded and withheld.
 */
export function createContextCompiler(dependencies: CompilerDependencies) {
  const { pool, settings, logger } = dependencies;
  const count = dependencies.count ?? ((text: string) => estimateTextTokens(text));

  return async function compile(request: ContextCompileRequest): Promise<ContextCompileReply> {
    const role = request.role;
    // One round trip for everything that depends only on the request; an unknown project is
    // rare enough that reading the rest for nothing costs less than a round trip every time.
    const [project, summaries, reviewTargets, skills, taskBoard, compaction, recent] = await Promise.all([
      getProject(pool, request.project_id),
      listFileSummaries(pool, request.project_id),
      role === 'quality_reviewer' ? listRunWrittenFileIds(pool, request.run_id) : Promise.resolve([]),
      listEnabledSkills(pool, request.user_id),
      getProjectTaskBoard(pool, request.project_id),
      getLatestCompaction(pool, request.session_id),
      listHistoryMessages(pool, request.session_id, { limit: RECENT_MESSAGES }),
    ]);
    if (!project) return { v: 1, ok: false, code: 'not_found' };

    // Isolation first: nothing below ever sees a file the role may not see.
    const { visible, withheld } = partitionByVisibility(summaries, role, new Set(reviewTargets));
    const visibleById = new Map(visible.map((file) => [file.id, file]));
    // The working set first: the assembly lists the files it shows whole by reference only.
    const projectContext = async () => {
      const workingSet = await buildWorkingSet({
        pool,
        projectId: request.project_id,
        recent: recent.filter((message) => message.runId !== request.run_id),
        visible: visibleById,
        settings: settings.workingSet,
        count,
      });
      const assembled: AssembledContext = await assembleContext({
        pool,
        projectId: request.project_id,
        message: request.message,
        focusId: request.focus_file_id,
        attachedIds: request.attached_file_ids,
        reviewTargetIds: reviewTargets.filter((id) => visibleById.has(id)),
        // History archives are reached through the summary that names them, not as context.
        files: visible.filter((file) => file.fileType !== ARCHIVE_FILE_TYPE),
        workingSetIds: workingSet.ids,
        budget: settings.contextTokens,
        count,
      });
      return { workingSet, assembled };
    };
    // The project context, the chosen skills and the history since the last compaction do not
    // depend on each other, so their reads overlap.
    const [{ workingSet, assembled }, chosen, stored] = await Promise.all([
      projectContext(),
      chosenSkillBlocks({
        pool,
        userId: request.user_id,
        names: chosenSkillNames(
          request.message,
          skills.map((skill) => skill.name),
        ),
        budgetTokens: settings.skillTokens,
        count,
      }),
      listHistoryMessages(pool, request.session_id, { afterSeq: compaction?.throughSeq ?? 0 }),
    ]);

    const turnParts = {
      narrativeConstraints: project.notes,
      currentFile: assembled.currentFile,
      taskBoard: renderTaskBoard(taskBoard),
      languageLine: languageLine(replyLanguage(request.message, request.ui_language)),
    };
    const turnContext = renderTurnContext({
      ...turnParts,
      chosenSkills: chosen.blocks,
      projectContext: assembled.text,
    });
    const workingSetText = renderWorkingSet(workingSet.blocks);
    const userContent = renderUserMessage(turnContext, workingSetText, request.message);
    const system = systemPrompt(project, skills);
    const systemTokens = count(system);
    // The turn's tokens by parts, each already measured (see assembleContext).
    const workingSetTokens = workingSet.loaded.reduce((sum, entry) => sum + entry.tokens, 0);
    const skeleton = renderTurnContext({ ...turnParts, chosenSkills: [], projectContext: '' });
    const turnTokens =
      count(skeleton) +
      assembled.tokens +
      chosen.loaded.reduce((sum, entry) => sum + entry.tokens, 0) +
      workingSetTokens +
      count(request.message) +
      8;

    const allFiles = new Map(summaries.map((file) => [file.id, file]));
    const compactionDependencies: CompactionDependencies = {
      pool,
      llm: dependencies.llm,
      logger,
      onUsage: (usage, provider, model) =>
        dependencies.onSummaryUsage?.(request, usage, provider, model) ?? Promise.resolve(),
    };
    const history = await buildHistoryWindow(compactionDependencies, {
      sessionId: request.session_id,
      projectId: request.project_id,
      runId: request.run_id,
      compaction,
      stored,
      allowance: historyAllowance({
        ceiling: settings.ledgerCeiling,
        historyBudget: settings.historyTokens,
        fixedTokens: systemTokens + turnTokens,
      }),
      compactionEnabled: settings.compactionEnabled,
      visibilityOf: (id) => allFiles.get(id)?.visibility,
      titleOf: (id) => allFiles.get(id)?.title,
      count,
    });

    const trace = buildTrace({
      request,
      settings,
      tokens: {
        system: systemTokens,
        context: assembled.tokens,
        workingSet: workingSetTokens,
        turn: turnTokens,
      },
      withheld,
      // Order of the trace: project context, working set, chosen skills, then history.
      parts: [assembled, workingSet, chosen],
      history,
    });
    await insertContextTrace(pool, { runId: request.run_id, role, step: trace.step, trace }).catch(
      (error: unknown) => {
        // The run can go on without its trace; the gap is visible in the log.
        logger.error({ err: error, run_id: request.run_id }, 'context trace not stored');
      },
    );
    return {
      v: 1,
      ok: true,
      messages: [
        { role: 'system', content: system },
        ...history.messages,
        { role: 'user', content: userContent },
      ],
    };
  };
}
