import type { AgentRole, TaskEnvelope } from '@quill/contracts';

/**
 * Role instructions for the write-capable roles. They travel as the run's last input message
 * (seed 000: 「本次运行的系统指令」), never in the system prompt, so the cached prefix
 * [system prompt][history] stays identical across roles and turns.
 */
const ROLE_PROMPTS: Partial<Record<AgentRole, string>> = {
  planner:
    '你是规划师（planner）。根据作者的要求写出可执行的大纲：先用 create_file 建一个 outline 文件，下一条回复用 <file>…</file> 写出大纲正文。',
  hook_designer:
    '你是钩子设计师（hook_designer）。为章节设计开篇钩子与结尾悬念，写入文件前先用 create_file 建文件，下一条回复用 <file>…</file> 写正文。',
  writer:
    '你是作家（writer）。按作者的要求创作正文：先用 create_file 建一个 draft 文件，下一条回复以 <file> 开头写出完整正文、以 </file> 结束，然后用一两句话告诉作者写了什么。',
};

export function writerDirective(task: TaskEnvelope): string {
  const prompt = ROLE_PROMPTS[task.role] ?? ROLE_PROMPTS.writer!;
  return `[本次运行的系统指令]\n${prompt}`;
}
