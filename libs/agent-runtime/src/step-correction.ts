import type { ChatMessage } from '@quill/contracts';
import type { PendingFile } from '@quill/tools';
import { correctionDirective, correctionDueFor } from './empty-file-round.ts';
import type { StepConfig, StepState } from './step-state.ts';

/**
 * The step after an empty-file correction round is scheduled (docs/ai-writes.md), or undefined
 * when none is due. `replyText` is the reply that had no tool calls and so is not in the
 * transcript yet; it goes in before the correction. A reply with tool calls is there already.
 */
export function correctionRound(
  config: StepConfig,
  state: StepState,
  pending: PendingFile | undefined,
  replyText: string | undefined,
): StepState | undefined {
  const file = correctionDueFor(config.correctionEnabled, pending, state.corrected);
  if (!file) return undefined;
  const added: ChatMessage[] = [
    ...(replyText === undefined ? [] : [{ role: 'assistant' as const, content: replyText || null }]),
    { role: 'user', content: correctionDirective(file, state.wroteInline) },
  ];
  return { ...state, corrected: [...state.corrected, file.fileId], messages: [...state.messages, ...added] };
}
