/**
 * Deterministic stand-ins for a real tokenizer: good enough to make streams look like a model's
 * (CJK one character per token, ASCII words whole) and to make usage numbers reproducible.
 */

// A word keeps its leading spaces so that joining the tokens gives back the exact text.
const TOKEN_PATTERN = /\s*[A-Za-z0-9_]+|\s+|[\s\S]/gu;

export function splitIntoTokens(text: string): string[] {
  return text.match(TOKEN_PATTERN) ?? [];
}

interface MessageLike {
  content?: unknown;
  tool_calls?: unknown;
}

/** ceil(characters / 2) over every message's content and tool calls: cheap and reproducible. */
export function estimatePromptTokens(messages: readonly MessageLike[]): number {
  let characters = 0;
  for (const message of messages) {
    characters += contentLength(message.content);
    if (message.tool_calls !== undefined) characters += JSON.stringify(message.tool_calls).length;
  }
  return Math.ceil(characters / 2);
}

function contentLength(content: unknown): number {
  if (typeof content === 'string') return content.length;
  // Multi-part content ([{ type: 'text', text }]) as the OpenAI API allows.
  if (Array.isArray(content)) {
    let length = 0;
    for (const part of content) {
      if (part && typeof part === 'object' && typeof part.text === 'string') length += part.text.length;
    }
    return length;
  }
  return 0;
}
