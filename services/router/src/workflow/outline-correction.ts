import { chapterNumber, type StepResult } from '@quill/contracts';
import type { Cursor, PlannedStep } from './steps.ts';
import type { WorkflowPlan } from './workflow-plan.ts';

/**
 * The planner's one correction round (docs/agent-behaviour.md 「规划补写只认结构化请求类型」): when the
 * router explicitly asked for an outline file (`requested_file_types` contains `outline`) and the
 * planner delivered a plan of several chapters in chat without writing an outline file, the same
 * planner runs once more to put that plan into the file. Only the router's typed request counts:
 * the author's wording never triggers it, and it happens at most once per run.
 */
export const OUTLINE_CORRECTION_CONTEXT =
  '[大纲补写] 作者要的是大纲文件，上一次回复把多章规划写在了聊天里，没有写进大纲文件。这一轮把刚才的规划写进大纲：先 create_file（file_type="outline"），再在下一条回复里用 <file> 写入完整大纲；不要改动规划内容，不要写正文。';

/** How many chapters a plan in chat lays out: distinct chapter numbers heading its lines. */
export function chaptersPlannedInChat(text: string): number {
  const numbers = new Set<number>();
  for (const line of text.split('\n')) {
    // A line that starts with the chapter (「第三章：…」, "## 第3章", "Chapter 3 -"), not a mention.
    const head = line.replace(/^[\s#>*\-+•]*(?:\d+[.)、]\s*)?/, '').slice(0, 24);
    if (!/^(第|chapter\s)/i.test(head)) continue;
    const number = chapterNumber(head);
    if (number !== null) numbers.add(number);
  }
  return numbers.size;
}

export function needsOutlineCorrection(
  plan: WorkflowPlan,
  cursor: Cursor,
  step: PlannedStep,
  result: StepResult,
): boolean {
  return (
    step.role === 'planner' &&
    !cursor.outlineCorrected &&
    !step.readOnly &&
    !step.clarifyFirst &&
    plan.routing.requested_file_types.includes('outline') &&
    !result.files_written.some((write) => write.file_type === 'outline' && write.body_chars > 0) &&
    chaptersPlannedInChat(result.final_text) >= 2
  );
}
