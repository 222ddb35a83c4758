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
  /** Set when the socket must be destroyed after the (truncated) stream instead of finishing. */
  disconnect: false | 'close' | 'reset';
  reasoningField: 'reasoning_content' | 'reasoning';
  usageStyle: 'openai' | 'last_chunk';
  /** Bytes per socket write; undefined: writes batched as usual. */
  writeBytes: number | undefined;
  sendUsage: boolean;
  usage: Usage;
}

export interface PlanContext {
  promptTokens: number;
  nextToolCallId: () => string;
}

export function planCompletion(step: TextStep, context: PlanContext): CompletionPlan {
  // Usage counts the model's tokens however the deltas are cut.
  const split = (text: string) =>
    step.delta_chars === undefined ? splitIntoTokens(text) : splitIntoPieces(text, step.delta_chars);
  let reasoningTokens = split(step.reasoning ?? '');
  let textTokens = split(step.text);
  let toolCalls = (step.tool_calls ?? []).map((call) => ({
    id: context.nextToolCallId(),
    name: call.name,
    argumentPieces: split(JSON.stringify(call.arguments)),
  }));
  const how = step.disconnect_how ?? 'close';
  let disconnect: CompletionPlan['disconnect'] = false;
  if (step.disconnect_after_reasoning_chars !== undefined) {
    reasoningTokens = takeCharacters(reasoningTokens, step.disconnect_after_reasoning_chars);
    textTokens = [];
    toolCalls = [];
    disconnect = how;
  } else if (step.disconnect_after_chars !== undefined) {
    textTokens = takeCharacters(textTokens, step.disconnect_after_chars);
    toolCalls = [];
    disconnect = how;
  }
  const tokens = (pieces: readonly string[]) => splitIntoTokens(pieces.join('')).length;
  const completionTokens =
    tokens(reasoningTokens) +
    tokens(textTokens) +
    toolCalls.reduce((total, call) => total + 1 + tokens(call.argumentPieces), 0);
  return {
    reasoningTokens,
    textTokens,
    toolCalls,
    finishReason: step.finish_reason ?? (toolCalls.length > 0 ? 'tool_calls' : 'stop'),
    disconnect,
    reasoningField: step.reasoning_field ?? 'reasoning_content',
    usageStyle: step.usage_style ?? 'openai',
    writeBytes: step.write_bytes,
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

/** Pieces of at most `size` code points (a surrogate pair is never split: JSON could not carry half). */
export function splitIntoPieces(text: string, size: number): string[] {
  const points = [...text];
  const pieces: string[] = [];
  for (let index = 0; index < points.length; index += size)
    pieces.push(points.slice(index, index + size).join(''));
  return pieces;
}
