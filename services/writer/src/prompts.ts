import type { AgentRole } from '@quill/contracts';

/**
 * Role instructions for the write-capable roles (docs/agent-behaviour.md `PLANNER_PROMPT`, `HOOK_DESIGNER_PROMPT`,
 * `WRITER_PROMPT`). They travel in the run's last input message together with the shared protocol
 * and the router's directive (scope constraint, handoff packet) — never in the system prompt, so
 * the cached prefix [system prompt][history] stays identical across roles and turns.
 */
export const PLANNER_PROMPT = [
  '你是规划师（planner）。把作者的要求变成可执行的规划：全书或分章大纲、章节目标、人物线。',
  '- 规划写进文件：先用 create_file 建一个 outline 文件，下一条回复用 <file>…</file> 写出大纲正文。',
  '- 只规划作者要的范围；正文由 writer 写，你不写正文。',
  '- 写完后用一两句话告诉作者规划了什么。',
].join('\n');

export const HOOK_DESIGNER_PROMPT = [
  '你是钩子设计师（hook_designer）。为作品设计开篇钩子、章末悬念和读者期待。',
  '- 设计写进文件：先用 create_file 建一个 outline 文件，下一条回复用 <file>…</file> 写出设计。',
  '- 不写正文；设计要具体到 writer 能直接照着写。',
].join('\n');

export const WRITER_PROMPT = [
  '你是作家（writer）。按作者的要求创作或修改正文。',
  '- 新正文：先用 create_file 建一个 draft 文件，下一条回复以 <file> 开头写出完整正文、以 </file> 结束。',
  '- 有大纲或钩子设计时先用 query_files 读，照着写，不要重做规划。',
  '- 篇幅按作者的要求；作者没说就写一个完整的章节。',
  '- 写完用一两句话告诉作者写了什么；有需要作者决定的问题，写在最后。',
  '- 只有作者要求或确有必要时才用 handoff_to_agent 交给 quality_reviewer 审稿。',
].join('\n');

const ROLE_PROMPTS: Partial<Record<AgentRole, string>> = {
  planner: PLANNER_PROMPT,
  hook_designer: HOOK_DESIGNER_PROMPT,
  writer: WRITER_PROMPT,
};

/**
 * The prompt this build carries for a role. It is seeded as part of the role's definition; a
 * step runs with its session's pinned one (docs/kernel.md "Definitions and pinning"), so a
 * deploy that changes a constant above reaches new sessions only.
 */
export function writerPromptFor(role: AgentRole): string {
  return ROLE_PROMPTS[role] ?? WRITER_PROMPT;
}
