import type { ChatMessage } from '@quill/contracts';
import type { ToolDefinition } from './types.ts';

/*
 * Used only when a provider does not report usage (the record is then marked `estimate`).
 * js-tiktoken is not a dependency, so this is a heuristic in the spirit of OpenAI's cookbook:
 * CJK and other non-ASCII characters count one token each (cl100k / o200k encode most Chinese
 * characters as 1 token), ASCII text one token per 4 characters, plus 4 tokens of framing per
 * message and 3 for the reply primer. It errs slightly high for Chinese prose, which is the safe
 * side for billing estimates and budgets.
 */
const MESSAGE_OVERHEAD_TOKENS = 4;
const REPLY_PRIMER_TOKENS = 3;
const ASCII_CHARACTERS_PER_TOKEN = 4;

export function estimateTextTokens(text: string): number {
  let ascii = 0;
  let other = 0;
  for (const character of text) {
    if (character.charCodeAt(0) < 0x80) ascii += 1;
    else other += 1;
  }
  return other + Math.ceil(ascii / ASCII_CHARACTERS_PER_TOKEN);
}

export function estimatePromptTokens(
  messages: readonly ChatMessage[],
  tools: readonly ToolDefinition[] = [],
): number {
  let total = REPLY_PRIMER_TOKENS;
  for (const message of messages) {
    total += MESSAGE_OVERHEAD_TOKENS + estimateTextTokens(message.content ?? '');
    if (message.role === 'assistant' && message.tool_calls) {
      for (const call of message.tool_calls) {
        total += estimateTextTokens(call.function.name) + estimateTextTokens(call.function.arguments);
      }
    }
  }
  if (tools.length > 0) total += estimateTextTokens(JSON.stringify(tools));
  return total;
}
