import type { ChatMessage } from '@quill/contracts';
import { continuationMessages, needsContinuation } from '@quill/llm';
import type { OpenCapture, TurnResult } from './model-turn.ts';

export interface ContinuationTracker {
  /** Options for the next model call: the body to resume, and whether a cut may stay open. */
  nextCall(): { resume?: OpenCapture; keepOpenOnLength: boolean };
  /**
   * After a reply without tool calls: when it was cut at the output limit and continuations are
   * left, appends the partial reply and the continuation request and returns true.
   */
  continueAfter(result: TurnResult, messages: ChatMessage[]): boolean;
  /** A body still open when the loop ended without its continuation (stop, turn cap). */
  takeOpenCapture(): OpenCapture | undefined;
  /** For the step journal: continuations used and the body held open for the next call. */
  snapshot(): { used: number; open?: OpenCapture };
}

/**
 * Output truncation (docs/agent-behaviour.md `output_truncation`): a reply with `finish_reason: "length"` gets
 * at most `maxContinuations` follow-up calls asking the model to go on exactly where it stopped.
 * A `<file>` body cut mid-way stays open across them, so the chapter is saved once, whole.
 */
export function createContinuationTracker(
  maxContinuations: number,
  resume?: { used: number; open?: OpenCapture | undefined },
): ContinuationTracker {
  let used = resume?.used ?? 0;
  let open: OpenCapture | undefined = resume?.open;
  return {
    nextCall() {
      const resume = open;
      open = undefined;
      return { ...(resume ? { resume } : {}), keepOpenOnLength: used < maxContinuations };
    },
    continueAfter(result, messages) {
      open = result.openCapture;
      if (!needsContinuation(result) || used >= maxContinuations) return false;
      used++;
      messages.push(...continuationMessages(result.rawText));
      return true;
    },
    takeOpenCapture() {
      const left = open;
      open = undefined;
      return left;
    },
    snapshot() {
      return { used, ...(open ? { open } : {}) };
    },
  };
}
