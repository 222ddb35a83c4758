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
  /** The step's questions for the author (note_question_for_author): typed, never read from `text`. */
  questions?: string[];
}

/**
 * What a step leaves for the router to release or discard: its held chat suffix and its typed
 * questions for the author. A step with questions but no held text still leaves them, so they
 * reach the author (released) or the reviewer (discarded) and are never lost.
 */
export function heldTextOf(result: StepResult): HeldText | undefined {
  const text = result.held_text ?? '';
  const questions = result.author_questions ?? [];
  if (!text.trim() && questions.length === 0) return undefined;
  return { step: result.step, role: result.role, text, ...(questions.length > 0 ? { questions } : {}) };
}

/**
 * The questions a content writer meant to ask the author, handed to the reviewer as
 * 「内容创作者要问作者的问题」 when its summary is discarded: the ones it recorded as data, never
 * sentences guessed from punctuation.
 */
export function questionsIn(held: readonly HeldText[]): string[] {
  return [...new Set(held.flatMap((item) => item.questions ?? []))];
}

/** What the author reads when a held item is released: its text, then its questions. */
export function releasedText(item: HeldText): string {
  const questions = (item.questions ?? []).map((question) => `- ${question}`).join('\n');
  return [item.text.trim() ? item.text : '', questions].filter(Boolean).join('\n\n');
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
      if (discardedSteps.has(result.step)) {
        // Discarded: the reviewer's summary carries the questions on.
        if (!held || !result.final_text.endsWith(held)) return result.final_text.trim();
        return result.final_text.slice(0, result.final_text.length - held.length).trim();
      }
      const questions = (result.author_questions ?? []).map((question) => `- ${question}`).join('\n');
      return [result.final_text.trim(), questions].filter(Boolean).join('\n\n');
    })
    .filter(Boolean);
  const question = clarification?.question.trim();
  if (question && !parts.some((part) => part.includes(question))) parts.push(question);
  return parts.join('\n\n');
}
