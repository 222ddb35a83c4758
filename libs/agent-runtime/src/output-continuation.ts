import type { ChatMessage } from '@quill/contracts';
import { continuationMessages, needsContinuation } from '@quill/llm';
import type { OpenCapture, TurnResult } from './model-turn.ts';

/**
 * Output truncation (docs/agent-behaviour.md `output_truncation`): a reply with `finish_reason: "length"` gets
 * at most `maxContinuations` follow-up calls asking the model to go on exactly where it stopped.
 * A `<file>` body cut mid-way stays open across them, so the chapter is saved once, whole.
 * Pure: the step machine keeps `used` and the open capture in its state.
 */

/** Whether the next call may leave a body open when it is cut at the length limit. */
export function mayKeepOpen(used: number, maxContinuations: number): boolean {
  return used < maxContinuations;
}

/**
 * After a reply without tool calls: when it was cut at the output limit and continuations are
 * left, the messages to append (the partial reply and the continuation request); else undefined.
 */
export function continuationAfter(
  result: Pick<TurnResult, 'finishReason' | 'toolCalls' | 'rawText'>,
  used: number,
  maxContinuations: number,
): ChatMessage[] | undefined {
  if (!needsContinuation(result) || used >= maxContinuations) return undefined;
  return continuationMessages(result.rawText);
}

export type { OpenCapture };
