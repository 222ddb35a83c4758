import { isDeepStrictEqual } from 'node:util';
import {
  type ChatMessage,
  ContextCompileReply,
  type ContextCompileRequest,
  type TokenUsage,
} from '@quill/contracts';
import { getCompiledStepContext } from '@quill/db';
import { insertContextTrace, saveRunTurnContext } from '@quill/db/context';
import { estimateTextTokens } from '@quill/llm';
import type { TokenCounter } from './budget.ts';
import { type CompactionDependencies, compactHistory } from './compaction.ts';
import { composeRolePrompt, composeTurn, finishCompile, historyInput } from './compose.ts';
import { planHistoryWindow } from './history-window.ts';
import { archiveTitleOf, loadCompileInputs } from './loader.ts';
import { createProjectTexts, type ProjectTexts } from './project-texts.ts';
import { languageLine, systemPrompt } from './prompts.ts';
import { renderRoleContext, renderTurnContext } from './render.ts';
import { countingLongTextsOnce } from './text-counts.ts';
import { parseTurnRecord } from './turn-record.ts';
import type { WorkingSetSettings } from './working-set.ts';

/** A stored prompt, or null when there is none or it no longer parses (it is compiled again). */
function storedMessages(value: unknown): ChatMessage[] | null {
  if (value === null) return null;
  const parsed = ContextCompileReply.safeParse({ v: 1, ok: true, messages: value });
  return parsed.success && parsed.data.ok ? parsed.data.messages : null;
}

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
  /** File texts through this replica's cache; one with the default bound when not given. */
  texts?: ProjectTexts;
  /** Reports the usage of a compaction summary made for this request (billing counts it). */
  onSummaryUsage?: (
    request: ContextCompileRequest,
    usage: TokenUsage,
    provider: string,
    model: string,
  ) => Promise<void>;
}

/**
 * The fixed lines every compile counts (system prompt with and without a skill catalog, the turn
 * context's headings and language lines, the role context's frame). Counted once at start-up
 * into the tokenizer's paragraph cache (@quill/llm), the first compile after a start tokenises
 * only what is its own.
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
    renderRoleContext('', null),
  ];
}

/**
 * The Context Compiler (docs/agent-behaviour.md, docs/architecture.md): decides what a role sees
 * for one step — under token budgets and visibility rules — lays it out cache-stably as
 * [system][history][turn context][working set][the role's own part][words], and records a
 * Context Trace of everything loaded and withheld. Load, then decide: loader.ts reads every
 * input into a plain value, compose.ts decides; the only I/O here is at the edges (storing the
 * run's turn context, compacting history, storing the trace).
 */
export function createContextCompiler(dependencies: CompilerDependencies) {
  const { pool, settings, logger } = dependencies;
  const count = countingLongTextsOnce(dependencies.count ?? ((text: string) => estimateTextTokens(text)));
  const texts = dependencies.texts ?? createProjectTexts(pool);

  // Trace writes still in flight: the reply does not wait for them (below), shutdown does.
  const storing = new Set<Promise<void>>();

  async function compile(request: ContextCompileRequest): Promise<ContextCompileReply> {
    // A redelivered step runs with the prompt its first delivery ran with (its journal continues
    // it); without one stored, it is compiled again from what is there now.
    if (request.reuse) {
      const stored = storedMessages(await getCompiledStepContext(pool, stepOf(request)));
      if (stored) return { v: 1, ok: true, messages: stored };
    }
    const inputs = await loadCompileInputs(pool, texts, request);
    if (!inputs) return { v: 1, ok: false, code: 'not_found' };

    const turn = composeTurn(inputs, settings, count);
    let record = turn.record;
    // The first compile of the run stores it; a racing one that stored first wins. The role's
    // prompt is composed while the row is written, and again only when another record won.
    const saving = turn.fresh ? saveRunTurnContext(pool, request.run_id, record) : undefined;
    let prompt = composeRolePrompt(inputs, record, settings, count);
    if (saving) {
      const stored = parseTurnRecord(await saving) ?? record;
      if (!isDeepStrictEqual(stored, record)) {
        record = stored;
        prompt = composeRolePrompt(inputs, record, settings, count);
      }
    }

    let plan = planHistoryWindow(historyInput(inputs, prompt, settings, count));
    const compacted = inputs.compaction !== null || plan.kind === 'compact';
    if (plan.kind === 'compact') {
      const boundary = await compactHistory(
        {
          pool,
          llm: dependencies.llm,
          logger,
          onUsage: (usage, provider, model) =>
            dependencies.onSummaryUsage?.(request, usage, provider, model) ?? Promise.resolve(),
        },
        {
          sessionId: request.session_id,
          projectId: request.project_id,
          runId: request.run_id,
          evicted: plan.evicted,
          previous: inputs.compaction,
        },
      );
      // A racing compile may have written a different boundary; it wins, we follow it.
      const listed = inputs.summaries.find((file) => file.id === boundary.archiveFileId)?.title;
      const archiveTitle =
        boundary.archiveFileId && !listed
          ? await archiveTitleOf(pool, request, boundary.archiveFileId)
          : listed;
      plan = planHistoryWindow({
        ...historyInput(inputs, prompt, settings, count),
        compaction: boundary,
        archiveTitle,
        mayCompact: false,
      });
    }
    if (plan.kind !== 'window') throw new Error('history window: compaction asked for twice');

    const { messages, trace } = finishCompile(inputs, record, prompt, plan.window, settings);
    // The reply does not wait for the trace: it is on the way to the first token, and the run can
    // go on without it (docs/decisions/0029-launch-compiles-while-routing.md). Nor does it wait
    // for the trace's serialisation (the prompt as JSON again, ~40,000 characters for a chapter of a
    // novel): the write starts in the event loop's next check phase, after the reply has gone out.
    const stored = nextCheckPhase()
      .then(() => insertContextTrace(pool, { ...stepOf(request), step: trace.step, trace, messages }))
      .catch((error: unknown) => {
        // The gap is visible in the log.
        logger.error({ err: error, run_id: request.run_id }, 'context trace not stored');
      });
    storing.add(stored);
    void stored.finally(() => storing.delete(stored));
    return { v: 1, ok: true, messages, compacted };
  }

  function stepOf(request: ContextCompileRequest) {
    return { runId: request.run_id, role: request.role, step: request.step ?? 0 };
  }

  return Object.assign(compile, {
    /** Resolves once every trace write started so far has ended. */
    async settled(): Promise<void> {
      await Promise.all(storing);
    },
  });
}

/** Resolves in the event loop's next check phase: after the microtasks that send a reply. */
function nextCheckPhase(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
