import type { ContextCompileRequest, ContextTrace, TraceExcluded, TraceLoaded } from '@quill/contracts';
import type { CompilerSettings } from './compiler.ts';
import type { HistoryWindow } from './history-window.ts';

interface Part {
  loaded: TraceLoaded[];
  excluded: TraceExcluded[];
}

/**
 * The Context Trace of one compile (docs/agent-behaviour.md): budgets, tokens per part of the prompt, and
 * every piece loaded or left out, with where it came from and why.
 */
export function buildTrace(input: {
  request: ContextCompileRequest;
  /** When the compile read its inputs (the loader's clock; this function has none). */
  compiledAt: string;
  settings: CompilerSettings;
  tokens: { system: number; context: number; workingSet: number; turn: number };
  withheld: TraceExcluded[];
  parts: Part[];
  history: HistoryWindow;
}): ContextTrace {
  const { request, settings, tokens, history } = input;
  const parts = [...input.parts, history];
  return {
    v: 1,
    run_id: request.run_id,
    role: request.role,
    step: request.step ?? 0,
    compiled_at: input.compiledAt,
    budgets: {
      context_tokens: settings.contextTokens,
      history_tokens: settings.historyTokens,
      ledger_ceiling_tokens: settings.ledgerCeiling,
      skill_tokens: settings.skillTokens,
    },
    usage: {
      system_tokens: tokens.system,
      history_tokens: history.tokens,
      context_tokens: tokens.context,
      working_set_tokens: tokens.workingSet,
      turn_tokens: tokens.turn,
      prompt_tokens: tokens.system + history.tokens + tokens.turn,
    },
    loaded: parts.flatMap((part) => part.loaded),
    excluded: [...input.withheld, ...parts.flatMap((part) => part.excluded)],
    history: {
      kept_messages: history.kept,
      compacted_messages: history.compacted,
      dropped_messages: history.dropped,
      ...(history.archiveFileId ? { archive_file_id: history.archiveFileId } : {}),
    },
  };
}
