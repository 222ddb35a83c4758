import type { AgentRole, StepResult } from '@quill/contracts';

/**
 * Seed 000 「只给作者一份总结」 (CHAT_HOLD), router side. A step that may go to review returns the
 * chat text it wrote after its first body write as `held_text` instead of streaming it. The
 * router then either discards it — the handoff to quality_reviewer really happens, and the
 * reviewer (or the revising writer) writes the one summary — or releases it unchanged before the
 * next agent, handoff, terminal or error event. The held text never reaches the author twice and
 * no CHAT_HOLD marker ever reaches the client.
 */
export interface HeldText {
  step: number;
  role: AgentRole;
  text: string;
}

export function heldTextOf(result: StepResult): HeldText | undefined {
  const text = result.held_text ?? '';
  return text.trim() ? { step: result.step, role: result.role, text } : undefined;
}

/**
 * The questions a content writer meant to ask the author, from its discarded text, handed to the
 * reviewer as 「内容创作者要问作者的问题」 so they are not lost with the discarded summary.
 */
export function questionsIn(held: readonly HeldText[]): string[] {
  const questions: string[] = [];
  for (const item of held) {
    for (const sentence of item.text.split(/(?<=[。！？?!\n])/)) {
      const trimmed = sentence.trim();
      if (/[？?]$/.test(trimmed)) questions.push(trimmed);
    }
  }
  return questions;
}

/**
 * The assistant reply stored in history: each step's chat text in step order, without the held
 * suffixes that were discarded, plus the clarification question when the run ends asking.
 */
export function buildReply(
  results: readonly StepResult[],
  discardedSteps: ReadonlySet<number>,
  clarification?: { question: string },
): string {
  const parts = [...results]
    .sort((a, b) => a.step - b.step)
    .map((result) => {
      const held = result.held_text ?? '';
      if (!discardedSteps.has(result.step) || !held || !result.final_text.endsWith(held)) {
        return result.final_text.trim();
      }
      return result.final_text.slice(0, result.final_text.length - held.length).trim();
    })
    .filter(Boolean);
  const question = clarification?.question.trim();
  if (question && !parts.some((part) => part.includes(question))) parts.push(question);
  return parts.join('\n\n');
}
