import type { TextStep } from './script-schema.ts';
import { splitIntoTokens } from './tokenizer.ts';

export type FinishReason = 'stop' | 'length' | 'tool_calls';

export interface PlannedToolCall {
  id: string;
  name: string;
  /** The JSON arguments cut into pieces, streamed one delta each as providers do. */
  argumentPieces: string[];
}

export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

/** Everything one completion will emit, decided before the first byte is written. */
export interface CompletionPlan {
  reasoningTokens: string[];
  textTokens: string[];
  toolCalls: PlannedToolCall[];
  finishReason: FinishReason;
  /** Set when the socket must be destroyed after the (truncated) text instead of finishing. */
  disconnect: boolean;
  sendUsage: boolean;
  usage: Usage;
}

export interface PlanContext {
  promptTokens: number;
  nextToolCallId: () => string;
}

export function planCompletion(step: TextStep, context: PlanContext): CompletionPlan {
  const reasoningTokens = splitIntoTokens(step.reasoning ?? '');
  let textTokens = splitIntoTokens(step.text);
  let toolCalls = (step.tool_calls ?? []).map((call) => ({
    id: context.nextToolCallId(),
    name: call.name,
    argumentPieces: splitIntoTokens(JSON.stringify(call.arguments)),
  }));
  const disconnect = step.disconnect_after_chars !== undefined;
  if (step.disconnect_after_chars !== undefined) {
    textTokens = takeCharacters(textTokens, step.disconnect_after_chars);
    toolCalls = [];
  }
  const completionTokens =
    reasoningTokens.length +
    textTokens.length +
    toolCalls.reduce((total, call) => total + 1 + call.argumentPieces.length, 0);
  return {
    reasoningTokens,
    textTokens,
    toolCalls,
    finishReason: step.finish_reason ?? (toolCalls.length > 0 ? 'tool_calls' : 'stop'),
    disconnect,
    sendUsage: step.no_usage !== true,
    usage: {
      prompt_tokens: context.promptTokens,
      completion_tokens: completionTokens,
      total_tokens: context.promptTokens + completionTokens,
    },
  };
}

/** The shortest prefix of tokens holding at least `limit` characters. */
function takeCharacters(tokens: readonly string[], limit: number): string[] {
  const taken: string[] = [];
  let characters = 0;
  for (const token of tokens) {
    if (characters >= limit) break;
    taken.push(token);
    characters += token.length;
  }
  return taken;
}
