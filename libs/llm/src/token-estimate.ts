import type { ChatMessage } from '@quill/contracts';
import { bpeEncoder, type EncodingName, warmBpeTable } from './bpe-tables.ts';
import { createParagraphCounter, paragraphsOf } from './paragraph-counter.ts';
import type { ToolDefinition } from './types.ts';

/*
 * Token counts with a real BPE tokenizer (gpt-tokenizer's core, tables in bpe-tables.ts). Used
 * for usage records the provider did not report (marked `estimate`), for the intra-run trimmer's
 * budget and for the context compiler's. No tokenizer is exact for every provider (DeepSeek,
 * Qwen and Llama have their own vocabularies); o200k counts CJK prose at roughly one token per
 * character, slightly above those vocabularies, which is the safe side for budgets. Framing
 * follows OpenAI's cookbook: 3 tokens per message, 3 for the reply primer.
 */
const MESSAGE_OVERHEAD_TOKENS = 3;
const REPLY_PRIMER_TOKENS = 3;

export type { EncodingName };

/** GPT-4 / 3.5 era models use cl100k; everything newer (and non-OpenAI models) is counted with o200k. */
export function encodingForModel(model: string | undefined): EncodingName {
  if (model && /^(gpt-4(?!o|\.)|gpt-3\.5|text-embedding)/i.test(model)) return 'cl100k_base';
  return 'o200k_base';
}

const SLICE_MS = 8;

// One paragraph-memoising counter per encoding (see paragraph-counter.ts): a tool loop re-counts
// the same transcript before every call, and the context compiler the same prompts every compile.
const counters = new Map<EncodingName, (text: string) => number>();

export function estimateTextTokens(text: string, encoding: EncodingName = 'o200k_base'): number {
  if (text.length === 0) return 0;
  let counter = counters.get(encoding);
  if (!counter) {
    counter = createParagraphCounter((paragraph) => count(paragraph, encoding));
    counters.set(encoding, counter);
  }
  return counter(text);
}

/**
 * Counts texts into the paragraph cache in slices of the event loop, so that a synchronous count
 * of the same texts afterwards only looks them up. A count takes a few µs per CJK character: the
 * usage of a stopped reply (its prompt and its text, tens of thousands of characters the process
 * has not counted before) would otherwise hold the event loop — every other run's tokens — for
 * tens of milliseconds (docs/decisions/0043, 0059).
 */
export async function precountTokens(
  texts: Iterable<string>,
  encoding: EncodingName = 'o200k_base',
  sliceMs = SLICE_MS,
): Promise<void> {
  await warmTokenizer(encoding);
  let until = performance.now() + sliceMs;
  for (const text of texts) {
    for (const paragraph of paragraphsOf(text)) {
      estimateTextTokens(paragraph, encoding);
      if (performance.now() < until) continue;
      await new Promise((resolve) => setImmediate(resolve));
      until = performance.now() + sliceMs;
    }
  }
}

/** The texts `estimatePromptTokens` counts, for `precountTokens`. */
export function* promptTexts(
  messages: readonly ChatMessage[],
  tools: readonly ToolDefinition[] = [],
): Generator<string> {
  if (tools.length > 0) yield JSON.stringify(tools);
  for (const message of messages) {
    yield message.content ?? '';
    if (message.role === 'assistant' && message.tool_calls) {
      for (const call of message.tool_calls) yield* [call.function.name, call.function.arguments];
    }
  }
}

/**
 * Builds the table in the background (~0.3 s of CPU, ~15 MB of heap, in slices that leave the
 * event loop free) so that a service pays it at start-up rather than inside its first model
 * call. Resolves once the table is complete.
 */
export function warmTokenizer(encoding: EncodingName = 'o200k_base'): Promise<void> {
  return warmBpeTable(encoding, SLICE_MS);
}

/**
 * The longest run of letters, of punctuation or of whitespace tokenised in one piece (code
 * points). The pre-tokenizer makes each such run one piece, and a BPE merges a piece's byte pairs
 * in time quadratic in its length (gpt-tokenizer's core as js-tiktoken before it: a scan for the
 * lowest rank per merge): prose has a piece break every few characters, but a text without
 * punctuation or spaces (unpunctuated classical Chinese, a long rule of dashes, model output gone
 * wrong) is one piece: with js-tiktoken 2,000 such characters took 2.4 s and 16,000 took 147 s,
 * the event loop blocked all the while; 4,000 ideographic spaces took 10.5 s. Longer runs are
 * counted in parts of this length: linear time, and a count at most a token or so per cut above
 * the tokenizer's (the safe side for budgets); every text without such a run is counted exactly.
 */
export const LONGEST_COUNTED_PIECE = 64;
const LONG_RUN = new RegExp(
  `[\\p{L}\\p{M}]{${LONGEST_COUNTED_PIECE + 1},}|[^\\s\\p{L}\\p{N}]{${LONGEST_COUNTED_PIECE + 1},}|\\s{${LONGEST_COUNTED_PIECE + 1},}`,
  'gu',
);

/** The parts a text is tokenised in: the text itself, or its long runs cut (see LONGEST_COUNTED_PIECE). */
export function countedParts(text: string): string[] {
  const parts: string[] = [];
  let start = 0;
  for (const match of text.matchAll(LONG_RUN)) {
    if (match.index > start) parts.push(text.slice(start, match.index));
    const points = Array.from(match[0]);
    for (let at = 0; at < points.length; at += LONGEST_COUNTED_PIECE) {
      parts.push(points.slice(at, at + LONGEST_COUNTED_PIECE).join(''));
    }
    start = match.index + match[0].length;
  }
  if (start === 0) return [text];
  if (start < text.length) parts.push(text.slice(start));
  return parts;
}

function count(text: string, encoding: EncodingName): number {
  const tokenizer = bpeEncoder(encoding);
  let total = 0;
  // No special token is allowed: "<|endoftext|>" in author text is plain text to us, never an error.
  for (const part of countedParts(text)) total += tokenizer.countNative(part);
  return total;
}

export function estimateMessageTokens(message: ChatMessage, encoding: EncodingName = 'o200k_base'): number {
  let total = MESSAGE_OVERHEAD_TOKENS + estimateTextTokens(message.content ?? '', encoding);
  if (message.role === 'assistant' && message.tool_calls) {
    for (const call of message.tool_calls) {
      total +=
        estimateTextTokens(call.function.name, encoding) +
        estimateTextTokens(call.function.arguments, encoding);
    }
  }
  return total;
}

export function estimateToolsTokens(
  tools: readonly ToolDefinition[] = [],
  encoding: EncodingName = 'o200k_base',
): number {
  return tools.length > 0 ? estimateTextTokens(JSON.stringify(tools), encoding) : 0;
}

/**
 * A bound the real count can never exceed, in microseconds instead of the BPE's ~10 µs per CJK
 * character: a byte-level BPE token always covers at least one UTF-8 byte. When this already fits
 * a budget, nothing needs counting on the way to the model (the first call of every step).
 */
export function promptTokensUpperBound(
  messages: readonly ChatMessage[],
  tools: readonly ToolDefinition[] = [],
): number {
  let total = REPLY_PRIMER_TOKENS + (tools.length > 0 ? Buffer.byteLength(JSON.stringify(tools)) : 0);
  for (const message of messages) {
    total += MESSAGE_OVERHEAD_TOKENS + Buffer.byteLength(message.content ?? '');
    if (message.role === 'assistant' && message.tool_calls) {
      for (const call of message.tool_calls) {
        total += Buffer.byteLength(call.function.name) + Buffer.byteLength(call.function.arguments);
      }
    }
  }
  return total;
}

export function estimatePromptTokens(
  messages: readonly ChatMessage[],
  tools: readonly ToolDefinition[] = [],
  encoding: EncodingName = 'o200k_base',
): number {
  let total = REPLY_PRIMER_TOKENS + estimateToolsTokens(tools, encoding);
  for (const message of messages) total += estimateMessageTokens(message, encoding);
  return total;
}
