import type { StepResult } from '@quill/contracts';
import { FIRST_MESSAGE_HINT } from '../routing/router-prompt.ts';
import { agentName, authorLanguage } from './author-facing.ts';
import { OUTLINE_CORRECTION_CONTEXT } from './outline-correction.ts';
import { type ReviewFile, reviewContent, type UnreadFile } from './review-content.ts';
import { describeLengthRequirement, findLengthRequirement } from './review-evidence.ts';
import { scopeDirective } from './scope-directive.ts';
import type { PlannedStep } from './steps.ts';
import type { WorkflowPlan } from './workflow-plan.ts';

/**
 * The directive the router sends with a task (TaskEnvelope.directive): the scope constraint plus
 * the handoff packet for this step. The worker appends it after the role prompt as the run's last
 * input message; it is never written into stored history.
 */
export const PLANNED_HANDOFF_SCOPE_NOTE =
  '计划交接不扩大交付：上一位已经完成的不要重做，不要改动刚交付的文件，不要追加作者没要的产出。';
export const FILE_STREAM_CONTINUATION_MARKER = '[文件流续写]';
export const FIRST_ROUND_SUMMARY_CONTEXT =
  '[首轮交付说明] 正文已经写好并保存。这一轮只用两三句话告诉作者写了什么、可以往哪里继续；不要调用工具，不要再写或改文件。';

const PRIOR_TEXT_CHARS = 400;

export interface ReviewEvidence {
  /**
   * For a review: the persisted bodies written in this run. For a revision: the current text of
   * the files the review names.
   */
  files: ReviewFile[];
  /** Persisted word counts by file id. */
  words: Map<string, number>;
  /** Files not read within the evidence's time limit: named, never passed off as checked. */
  unread?: UnreadFile[];
}

export function buildDirective(
  plan: WorkflowPlan,
  step: PlannedStep,
  prior: readonly StepResult[],
  evidence?: ReviewEvidence,
): string {
  const sections: string[] = [];
  if (step.kind === 'continuation') {
    sections.push(
      `${FILE_STREAM_CONTINUATION_MARKER} 上一次回复写完文件就结束了：接着把本轮交付做完（需要新文件就先 create_file，再在下一条回复里用 <file> 写正文）；已经写好的文件不要重写。`,
    );
  }
  sections.push(scopeDirective(plan, step));
  const packet = handoffPacket(plan, step, prior, evidence);
  if (packet) sections.push(packet);
  if (step.kind === 'outline_correction') sections.push(OUTLINE_CORRECTION_CONTEXT);
  if (step.kind === 'summary') sections.push(FIRST_ROUND_SUMMARY_CONTEXT);
  else if (plan.routing.first_message && step.role === 'writer') sections.push(FIRST_MESSAGE_HINT);
  return sections.join('\n\n');
}

function handoffPacket(
  plan: WorkflowPlan,
  step: PlannedStep,
  prior: readonly StepResult[],
  evidence: ReviewEvidence | undefined,
): string | undefined {
  if (['initial', 'continuation', 'summary', 'outline_correction'].includes(step.kind)) return undefined;
  const language = authorLanguage(plan.message);
  const lines = ['## 交接说明'];
  if (step.from) lines.push(`来自${agentName(step.from, language)}（${step.from}）的交接：${step.reason}`);
  lines.push(`本轮目标（作者的范围）：${plan.routing.scope || plan.message.slice(0, 80)}`);
  if (step.kind === 'planned') lines.push(PLANNED_HANDOFF_SCOPE_NOTE);
  const done = prior.map(describeStep).filter(Boolean);
  if (done.length > 0) lines.push(`[本轮已完成的工作]\n${done.join('\n')}`);
  if (step.review && evidence) {
    const counts = [
      ...evidence.files.map(
        (file) => `- 《${file.title}》(id=${file.id})：${evidence.words.get(file.id) ?? 0} 字`,
      ),
      ...(evidence.unread ?? []).map(
        (file) => `- 《${file.title}》(id=${file.id})：没能在读取时限内读到，字数没有核对`,
      ),
    ];
    lines.push(`[本轮正文字数]\n${counts.length > 0 ? counts.join('\n') : '- 本轮没有成功写入的正文'}`);
    lines.push(`[作者的篇幅要求]\n${describeLengthRequirement(findLengthRequirement(plan.message))}`);
    lines.push(`[待审查内容]\n${reviewContent(evidence.files, undefined, evidence.unread)}`);
  }
  if (step.revision) {
    const review = [...prior].reverse().find((result) => result.role === 'quality_reviewer');
    if (review?.final_text.trim()) lines.push(`[审稿意见]\n${review.final_text.trim()}`);
    if (evidence) lines.push(`[返修对象当前正文]\n${revisionContent(evidence)}`);
  }
  if (step.writerQuestions.length > 0 && (step.review || step.revision)) {
    lines.push(
      `[内容创作者要问作者的问题]\n${step.writerQuestions.map((question) => `- ${question}`).join('\n')}`,
    );
    lines.push('作者只会读到你这一份总结：请把上面的问题一并转达给作者。');
  }
  return lines.join('\n\n');
}

function revisionContent(evidence: ReviewEvidence): string {
  if (evidence.files.length === 0 && (evidence.unread ?? []).length === 0) {
    return '（审稿意见没有点名本轮写过的文件：按意见用 query_files 读取要改的文件。）';
  }
  return reviewContent(evidence.files, undefined, evidence.unread);
}

function describeStep(result: StepResult): string {
  const files = result.files_written.map(
    (write) => `《${write.title}》(id=${write.file_id}, ${write.file_type}, ${write.body_chars} 字)`,
  );
  const text = [...result.final_text.trim()].slice(0, PRIOR_TEXT_CHARS).join('');
  const parts = [`- ${result.role}`];
  if (files.length > 0) parts.push(`写入 ${files.join('、')}`);
  if (text) parts.push(`说明：${text}`);
  return parts.length > 1 ? parts.join('；') : '';
}
