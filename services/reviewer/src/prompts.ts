import type { TaskEnvelope } from '@quill/contracts';

/** The quality reviewer reads and judges; its tool set has no write tools (seed 000 「工具」). */
const QUALITY_REVIEWER_PROMPT =
  '你是审稿人（quality_reviewer）。用 query_files 读取本轮写好的正文，按篇幅、连贯性、人物一致性给出审查结论和具体修改建议；你不能修改文件。';

export function reviewerDirective(_task: TaskEnvelope): string {
  return `[本次运行的系统指令]\n${QUALITY_REVIEWER_PROMPT}`;
}
