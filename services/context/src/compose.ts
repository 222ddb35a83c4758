import {
  type ChatMessage,
  type ContextCompileRequest,
  type ContextTrace,
  FILE_VISIBILITY_ALL,
  type TraceExcluded,
} from '@quill/contracts';
import {
  type FileSummary,
  HISTORY_ARCHIVE_FILE_TYPE,
  type HistoryCompaction,
  type HistoryMessage,
} from '@quill/db';
import {
  type AssembledContext,
  type AssemblyRequest,
  assembleContext,
  type VisibleFile,
} from './assembler.ts';
import { historyAllowance, type TokenCounter } from './budget.ts';
import { chosenSkillBlocks, chosenSkillNames, type SkillText } from './chosen-skills.ts';
import type { CompilerSettings } from './compiler.ts';
import type { FileSearchHit } from './file-search.ts';
import type { HistoryWindow, HistoryWindowInput } from './history-window.ts';
import { partitionByVisibility } from './isolation.ts';
import { type CatalogSkill, languageLine, replyLanguage, systemPrompt } from './prompts.ts';
import { renderRoleContext, renderTurnContext, renderUserMessage, renderWorkingSet } from './render.ts';
import { renderTaskBoard } from './task-board.ts';
import { buildTrace } from './trace.ts';
import type { TurnRecord } from './turn-record.ts';
import { buildWorkingSet, type WorkingSet } from './working-set.ts';

/**
 * The compiler's decisions, as pure functions over what the loader read (loader.ts): the run's
 * turn context, this role's own part, the working set, the history window and the Context Trace.
 * No database, no clock, no model: the same inputs give the same prompt, byte for byte.
 */
export interface CompileInputs {
  request: ContextCompileRequest;
  compiledAt: string;
  project: { title: string; projectType: string; notes: string };
  summaries: readonly FileSummary[];
  /** Files this run wrote (the reviewer's review targets); empty for other roles. */
  reviewTargets: readonly string[];
  catalog: readonly CatalogSkill[];
  /** The session's latest messages: the working set comes from the last replies among them. */
  recent: readonly HistoryMessage[];
  compaction: HistoryCompaction | null;
  archiveTitle: string | undefined;
  /** The session's messages after `compaction`'s boundary. */
  stored: readonly HistoryMessage[];
  /** The run's turn context when an earlier step built it; the fields below build it otherwise. */
  storedTurn: TurnRecord | null;
  taskBoard: readonly unknown[];
  chosenSkills: ReadonlyMap<string, SkillText>;
  /** Current contents of every file a part may show (scene, candidates, world, working set). */
  contents: ReadonlyMap<string, string>;
  sharedHits: readonly FileSearchHit[];
  roleHits: readonly FileSearchHit[];
}

export interface Partition {
  visible: VisibleFile[];
  withheld: TraceExcluded[];
  /** Files every role may see: the only ones the run's shared turn context is built from. */
  shared: VisibleFile[];
  /** What only this role sees: its private files and, for the reviewer, the run's writes. */
  own: VisibleFile[];
  ownTargets: string[];
}

/** Isolation first: nothing below ever sees a file the role may not see. */
export function partitionFiles(
  summaries: readonly FileSummary[],
  request: ContextCompileRequest,
  reviewTargets: readonly string[],
): Partition {
  const { visible, withheld } = partitionByVisibility(summaries, request.role, new Set(reviewTargets));
  // History archives are reached through the summary that names them, not as context.
  const candidates = visible.filter((file) => file.fileType !== HISTORY_ARCHIVE_FILE_TYPE);
  const targets = new Set(reviewTargets);
  const shared = candidates.filter((file) => file.permission === FILE_VISIBILITY_ALL);
  // A review target is the reviewer's even when everyone sees it: the run changed it since the
  // shared turn context was built.
  const own = candidates.filter((file) => file.permission !== FILE_VISIBILITY_ALL || targets.has(file.id));
  return {
    visible,
    withheld,
    shared,
    own,
    ownTargets: own.filter((file) => targets.has(file.id)).map((file) => file.id),
  };
}

export function sharedAssembly(request: ContextCompileRequest, partition: Partition): AssemblyRequest {
  return {
    message: request.message,
    focusId: request.focus_file_id,
    attachedIds: request.attached_file_ids,
    reviewTargetIds: [],
    files: partition.shared,
  };
}

export function ownAssembly(request: ContextCompileRequest, partition: Partition): AssemblyRequest | null {
  if (partition.own.length === 0) return null;
  return {
    ...sharedAssembly(request, partition),
    reviewTargetIds: partition.ownTargets,
    files: partition.own,
  };
}

/** The working set's replies: the current run's own messages are not history yet. */
export function workingSetHistory(inputs: Pick<CompileInputs, 'recent' | 'request'>): HistoryMessage[] {
  return inputs.recent.filter((message) => message.runId !== inputs.request.run_id);
}

const byId = (files: readonly VisibleFile[]) => new Map(files.map((file) => [file.id, file]));

/** The run's turn context: the stored one, or built now from what every role may see. */
export function composeTurn(
  inputs: CompileInputs,
  settings: CompilerSettings,
  count: TokenCounter,
): { record: TurnRecord; fresh: boolean } {
  if (inputs.storedTurn) return { record: inputs.storedTurn, fresh: false };
  const { request } = inputs;
  const partition = partitionFiles(inputs.summaries, request, inputs.reviewTargets);
  // The working set first: the assembly lists the files it shows whole by reference only.
  const workingSet = buildWorkingSet({
    recent: workingSetHistory(inputs),
    visible: byId(partition.shared),
    contents: inputs.contents,
    settings: settings.workingSet,
    count,
  });
  const assembled = assembleContext({
    ...sharedAssembly(request, partition),
    contents: inputs.contents,
    searchHits: inputs.sharedHits,
    workingSetIds: workingSet.ids,
    budget: settings.contextTokens,
    count,
  });
  const chosen = chosenSkillBlocks({
    names: chosenSkillNames(
      request.message,
      inputs.catalog.map((skill) => skill.name),
    ),
    skills: inputs.chosenSkills,
    budgetTokens: settings.skillTokens,
    count,
  });
  const turnParts = {
    narrativeConstraints: inputs.project.notes,
    currentFile: assembled.currentFile,
    taskBoard: renderTaskBoard(inputs.taskBoard),
    languageLine: languageLine(replyLanguage(request.message, request.ui_language)),
  };
  const text = renderTurnContext({
    ...turnParts,
    chosenSkills: chosen.blocks,
    projectContext: assembled.text,
  });
  // Counted by parts, each already measured (see assembleContext).
  const skeleton = renderTurnContext({ ...turnParts, chosenSkills: [], projectContext: '' });
  const tokens =
    count(skeleton) + assembled.tokens + chosen.loaded.reduce((sum, entry) => sum + entry.tokens, 0);
  return {
    fresh: true,
    record: {
      v: 1,
      text,
      tokens,
      contextTokens: assembled.tokens,
      currentFile: assembled.currentFile,
      workingSetIds: [...workingSet.ids],
      context: { loaded: assembled.loaded, excluded: assembled.excluded },
      skills: { loaded: chosen.loaded, excluded: chosen.excluded },
    },
  };
}

export interface RolePrompt {
  system: string;
  systemTokens: number;
  userContent: string;
  /** The user message's tokens: turn context, working set, the role's own part, the words. */
  turnTokens: number;
  workingSet: WorkingSet;
  workingSetTokens: number;
  own: AssembledContext | null;
  withheld: TraceExcluded[];
}

/** This role's prompt around the run's turn context: [system] … [turn][working set][own][words]. */
export function composeRolePrompt(
  inputs: CompileInputs,
  turn: TurnRecord,
  settings: CompilerSettings,
  count: TokenCounter,
): RolePrompt {
  const { request } = inputs;
  const partition = partitionFiles(inputs.summaries, request, inputs.reviewTargets);
  const visible = byId(partition.visible);
  const workingSet = buildWorkingSet({
    recent: workingSetHistory(inputs),
    visible,
    contents: inputs.contents,
    settings: settings.workingSet,
    count,
    required: new Set(turn.workingSetIds.filter((id) => visible.has(id))),
  });
  const ownRequest = ownAssembly(request, partition);
  const own = ownRequest
    ? assembleContext({
        ...ownRequest,
        contents: inputs.contents,
        searchHits: inputs.roleHits,
        workingSetIds: workingSet.ids,
        budget: ownBudget(settings.contextTokens, turn.contextTokens),
        count,
      })
    : null;
  const ownText = own ? renderRoleContext(own.text, turn.currentFile ? null : own.currentFile) : '';
  const workingSetText = renderWorkingSet(workingSet.blocks);
  const userContent = renderUserMessage(turn.text, workingSetText, request.message, ownText);
  const system = systemPrompt(inputs.project, inputs.catalog);
  const workingSetTokens = workingSet.loaded.reduce((sum, entry) => sum + entry.tokens, 0);
  const ownTokens = own ? count(renderRoleContext('', null)) + own.tokens : 0;
  return {
    system,
    systemTokens: count(system),
    userContent,
    turnTokens: turn.tokens + ownTokens + workingSetTokens + count(request.message) + 8,
    workingSet,
    workingSetTokens,
    own,
    withheld: partition.withheld,
  };
}

/** A share of the context budget the role's own part always has, whatever the shared part took. */
export const OWN_CONTEXT_MIN_SHARE = 0.25;

export function ownBudget(contextTokens: number, sharedTokens: number): number {
  return Math.max(contextTokens - sharedTokens, Math.floor(contextTokens * OWN_CONTEXT_MIN_SHARE));
}

export function historyInput(
  inputs: CompileInputs,
  prompt: RolePrompt,
  settings: CompilerSettings,
  count: TokenCounter,
): HistoryWindowInput {
  const files = new Map(inputs.summaries.map((file) => [file.id, file]));
  return {
    runId: inputs.request.run_id,
    compaction: inputs.compaction,
    archiveTitle: inputs.archiveTitle,
    stored: inputs.stored,
    allowance: historyAllowance({
      ceiling: settings.ledgerCeiling,
      historyBudget: settings.historyTokens,
      fixedTokens: prompt.systemTokens + prompt.turnTokens,
    }),
    mayCompact: settings.compactionEnabled,
    visibilityOf: (id) => files.get(id)?.visibility,
    count,
  };
}

/** The messages and the Context Trace of the compile. */
export function finishCompile(
  inputs: CompileInputs,
  turn: TurnRecord,
  prompt: RolePrompt,
  history: HistoryWindow,
  settings: CompilerSettings,
): { messages: ChatMessage[]; trace: ContextTrace } {
  const trace = buildTrace({
    request: inputs.request,
    compiledAt: inputs.compiledAt,
    settings,
    tokens: {
      system: prompt.systemTokens,
      context: turn.contextTokens + (prompt.own?.tokens ?? 0),
      workingSet: prompt.workingSetTokens,
      turn: prompt.turnTokens,
    },
    withheld: prompt.withheld,
    // Order of the trace: project context (shared, then the role's own), working set, chosen
    // skills, then history.
    parts: [turn.context, ...(prompt.own ? [prompt.own] : []), prompt.workingSet, turn.skills],
    history,
  });
  return {
    messages: [
      { role: 'system', content: prompt.system },
      ...history.messages,
      { role: 'user', content: prompt.userContent },
    ],
    trace,
  };
}
