import type { ContextTier } from '@quill/contracts';

/** Counts tokens of a text; the compiler passes the real tokenizer (@quill/llm). */
export type TokenCounter = (text: string) => number;

/**
 * The request-level prompt ledger (docs/agent-behaviour.md context/budget.py): system prompt, turn context,
 * working set and history share one ceiling, and only history gives way. Tokens kept back for
 * the role directive and tool schemas that the worker adds after compiling.
 */
export const DIRECTIVE_AND_TOOLS_RESERVE_TOKENS = 6_000;

export function historyAllowance(input: {
  ceiling: number;
  historyBudget: number;
  fixedTokens: number;
}): number {
  const room = input.ceiling - input.fixedTokens - DIRECTIVE_AND_TOOLS_RESERVE_TOKENS;
  return Math.max(0, Math.min(input.historyBudget, room));
}

/**
 * The longest prefix of `text` within `maxTokens`, preferably ending at a line or sentence end.
 * Scales the cut by the measured chars-per-token ratio, so a long file costs a couple of counts.
 */
export function truncateToTokens(text: string, maxTokens: number, count: TokenCounter): string {
  if (maxTokens <= 0 || text.length === 0) return '';
  const total = count(text);
  if (total <= maxTokens) return text;
  let cut = Math.floor((text.length * maxTokens) / total);
  for (let attempt = 0; attempt < 12 && cut > 0; attempt++) {
    cut = avoidSplitSurrogate(text, cut);
    const tokens = count(text.slice(0, cut));
    if (tokens <= maxTokens) break;
    cut = Math.min(cut - 1, Math.floor((cut * maxTokens) / tokens));
  }
  if (cut <= 0) return '';
  return text.slice(0, sentenceEnd(text, cut));
}

const SENTENCE_ENDS = new Set(['\n', '。', '！', '？', '…', '.', '!', '?', '”', '」']);
const BOUNDARY_LOOKBACK = 80;

function sentenceEnd(text: string, cut: number): number {
  for (let index = cut; index > Math.max(0, cut - BOUNDARY_LOOKBACK); index--) {
    if (SENTENCE_ENDS.has(text[index - 1]!)) return index;
  }
  return cut;
}

function avoidSplitSurrogate(text: string, cut: number): number {
  const code = text.charCodeAt(cut - 1);
  return code >= 0xd800 && code <= 0xdbff ? cut - 1 : cut;
}

/** A non-critical remnant shorter than this and than half its original is not worth showing. */
export const MIN_FRAGMENT_CHARS = 500;
/** A non-critical item may take at most this share of the context budget. */
export const NON_CRITICAL_ITEM_SHARE = 0.4;
/** Below this many tokens left, the remaining items are not even measured. */
const MIN_USEFUL_TOKENS = 48;

export interface BudgetItem {
  key: string;
  tier: ContextTier;
  /** The text to show (a file's content or a snippet). */
  content: string;
  /** Tokens of the header line rendered above the content. */
  headerTokens: number;
}

export type Allocation =
  | { key: string; status: 'full'; shown: string; tokens: number }
  | { key: string; status: 'truncated'; shown: string; tokens: number }
  | { key: string; status: 'dropped'; detail: 'no_room' | 'fragment' };

/**
 * Greedy allocation in priority order. CRITICAL items may use whatever is left; others are
 * capped at a share of the budget so one long file cannot starve the rest of its tier, and
 * their truncated remnant is dropped when it is under 500 chars and under half the original
 * (the file stays listed, so the agent can still read it with query_files).
 */
export function allocate(
  items: readonly BudgetItem[],
  limits: { budget: number; itemCap: number },
  count: TokenCounter,
): { allocations: Allocation[]; used: number } {
  const { budget, itemCap } = limits;
  let remaining = budget;
  const allocations: Allocation[] = [];
  for (const item of items) {
    const critical = item.tier === 'critical';
    const room = (critical ? remaining : Math.min(remaining, itemCap)) - item.headerTokens;
    if (room < MIN_USEFUL_TOKENS) {
      allocations.push({ key: item.key, status: 'dropped', detail: 'no_room' });
      continue;
    }
    const shown = truncateToTokens(item.content, room, count);
    const full = shown.length === item.content.length;
    if (!full && !critical && shown.length < MIN_FRAGMENT_CHARS && shown.length * 2 < item.content.length) {
      allocations.push({
        key: item.key,
        status: 'dropped',
        detail: shown.length === 0 ? 'no_room' : 'fragment',
      });
      continue;
    }
    if (shown.length === 0 && item.content.length > 0) {
      allocations.push({ key: item.key, status: 'dropped', detail: 'no_room' });
      continue;
    }
    const tokens = (full ? count(item.content) : count(shown)) + item.headerTokens;
    remaining -= tokens;
    allocations.push({ key: item.key, status: full ? 'full' : 'truncated', shown, tokens });
  }
  return { allocations, used: budget - remaining };
}
