import { createRequire } from 'node:module';
import type { ChatMessage } from '@quill/contracts';
import type { Tiktoken, TiktokenBPE } from 'js-tiktoken/lite';
import { createParagraphCounter } from './paragraph-counter.ts';
import type { ToolDefinition } from './types.ts';

/*
 * Token counts with a real BPE tokenizer (js-tiktoken). Used for usage records the provider did
 * not report (marked `estimate`) and for the intra-run trimmer's budget. No tokenizer is exact
 * for every provider (DeepSeek, Qwen and Llama have their own vocabularies); o200k counts CJK
 * prose at roughly one token per character, slightly above those vocabularies, which is the safe
 * side for budgets. Framing follows OpenAI's cookbook: 3 tokens per message, 3 for the reply primer.
 */
const MESSAGE_OVERHEAD_TOKENS = 3;
const REPLY_PRIMER_TOKENS = 3;

export type EncodingName = 'o200k_base' | 'cl100k_base';

/** GPT-4 / 3.5 era models use cl100k; everything newer (and non-OpenAI models) is counted with o200k. */
export function encodingForModel(model: string | undefined): EncodingName {
  if (model && /^(gpt-4(?!o|\.)|gpt-3\.5|text-embedding)/i.test(model)) return 'cl100k_base';
  return 'o200k_base';
}

// The rank tables are megabytes of JS each; load one only when it is first needed.
const require = createRequire(import.meta.url);
const encoders = new Map<EncodingName, Tiktoken>();

function encoder(name: EncodingName): Tiktoken {
  let found = encoders.get(name);
  if (!found) {
    const { Tiktoken: TiktokenClass } = require('js-tiktoken/lite') as typeof import('js-tiktoken/lite');
    // The CommonJS build exports the table itself (no `default`).
    const ranks = require(`js-tiktoken/ranks/${name}`) as TiktokenBPE;
    found = new TiktokenClass(ranks);
    encoders.set(name, found);
  }
  return found;
}

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
 * Loads the default table now (~1 s of CPU, ~75 MB of heap) so that a service pays it at
 * start-up rather than inside its first model call.
 */
export function warmTokenizer(encoding: EncodingName = 'o200k_base'): void {
  encoder(encoding);
}

function count(text: string, encoding: EncodingName): number {
  // Special tokens ("<|endoftext|>") in author text are plain text to us, never an error.
  return encoder(encoding).encode(text, [], []).length;
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
