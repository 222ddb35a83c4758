import type { ChatMessage } from '@quill/contracts';
import {
  type EncodingName,
  estimateMessageTokens,
  estimatePromptTokens,
  promptTokensUpperBound,
  warmTokenizer,
} from './token-estimate.ts';
import type { ToolDefinition } from './types.ts';

/*
 * The context compiler budgets what a run starts with; a tool loop then grows the transcript by
 * one assistant turn and its tool results per model call, and a long loop (many `query_files`
 * reads) would outgrow the model's window and fail every further call (docs/agent-behaviour.md
 * `intra_run_trimmer`). Before each attempt the transcript is fitted to that attempt's provider:
 * the oldest tool results are replaced by a short note first. System prompts and the final
 * directive (the last user message) are never touched, and every tool message stays so that each
 * `tool_call_id` is still answered.
 */

/** Our tokenizer is not the provider's; keep this much of the window as headroom. */
const SAFETY_RATIO = 0.9;
export const TRIMMED_NOTE_PREFIX = '[tool result removed to fit the context window';

export interface TrimOptions {
  maxInputTokens: number;
  tools?: readonly ToolDefinition[];
  encoding?: EncodingName;
}

export interface TrimResult {
  /** The same array when nothing had to change, otherwise a copy. */
  messages: ChatMessage[];
  trimmedToolResults: number;
  /** The tokenizer's count, or only a bound above it when that bound already fit the budget. */
  estimatedTokens: number;
  /** True when even with every tool result trimmed the estimate is over the budget. */
  overBudget: boolean;
}

/**
 * Fits the transcript to one attempt's budget. The common case needs no count: the transcript's
 * byte bound (computed once here) already fits. Otherwise the tokenizer's table is built first
 * (in slices that leave the event loop free, token-estimate.ts), then `trimTranscript` counts.
 * Most processes never count, and do not pay the table's build.
 */
export async function fitTranscript(messages: ChatMessage[], options: TrimOptions): Promise<TrimResult> {
  const budget = Math.floor(options.maxInputTokens * SAFETY_RATIO);
  const bound = promptTokensUpperBound(messages, options.tools);
  if (bound <= budget) return { messages, trimmedToolResults: 0, estimatedTokens: bound, overBudget: false };
  await warmTokenizer(options.encoding);
  return trimTranscript(messages, options);
}

export function trimTranscript(messages: ChatMessage[], options: TrimOptions): TrimResult {
  const budget = Math.floor(options.maxInputTokens * SAFETY_RATIO);
  const bound = promptTokensUpperBound(messages, options.tools);
  if (bound <= budget) return { messages, trimmedToolResults: 0, estimatedTokens: bound, overBudget: false };
  let total = estimatePromptTokens(messages, options.tools, options.encoding);
  if (total <= budget) return { messages, trimmedToolResults: 0, estimatedTokens: total, overBudget: false };

  const trimmed = [...messages];
  let count = 0;
  // Oldest first, so the model keeps what it read most recently.
  for (let index = 0; index < trimmed.length && total > budget; index++) {
    const message = trimmed[index]!;
    if (message.role !== 'tool' || message.content.startsWith(TRIMMED_NOTE_PREFIX)) continue;
    const before = estimateMessageTokens(message, options.encoding);
    const replacement: ChatMessage = {
      role: 'tool',
      tool_call_id: message.tool_call_id,
      content: `${TRIMMED_NOTE_PREFIX} (~${before} tokens); call the tool again if you still need it]`,
    };
    const after = estimateMessageTokens(replacement, options.encoding);
    if (after >= before) continue;
    trimmed[index] = replacement;
    total -= before - after;
    count++;
  }
  if (count === 0) return { messages, trimmedToolResults: 0, estimatedTokens: total, overBudget: true };
  return { messages: trimmed, trimmedToolResults: count, estimatedTokens: total, overBudget: total > budget };
}
