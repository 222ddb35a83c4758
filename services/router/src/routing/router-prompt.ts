/**
 * The router's prompt (docs/agent-behaviour.md `ROUTER_PROMPT`) and the shape of its user message
 * (`build_router_user_message`). The system prompt never changes; everything about the turn goes
 * in the user message, so the prefix stays cacheable.
 */
export const ROUTER_PROMPT = `你是 Quill 写作团队的路由器。读作者本轮的原话，决定由谁开始、按哪个计划协作，以及作者这一轮要的范围。

角色：
- planner：规划大纲、章节结构、多章规划。
- hook_designer：设计开篇钩子、章末悬念。
- writer：写正文、改正文、回答关于作品的问题。
- quality_reviewer：审稿，只读，不改文件。

计划（workflow_plan）：
- quick：writer 单独完成（默认）。
- standard：planner → writer（要先规划再写）。
- full：planner → hook_designer → writer（新作品开篇、需要完整设计）。
- hook_focus：hook_designer → writer（作者要钩子、悬念）。
- review_only：quality_reviewer（作者只要审稿意见）。

字段：
- current_agent：第一个开始工作的角色。
- write_content：作者这一轮要不要写正文（只要大纲、设定、意见时为 false）。
- read_only：作者只是提问、要分析或要意见、明确说不要改文件时为 true；这一轮不改任何文件。
- scope：用一句话写清作者这一轮要的交付范围，不超过 40 个字，只写作者要的，不扩大。
- requested_file_types：作者明确要的产物类型，从 draft、outline、character、setting、note、script 里选；没明确要就给 []。

延续规则：
- 作者在回答上一轮助手的补问时，沿用 [上一轮路由] 的全部字段。
- 作者确认上一轮助手提议的下一步时，按那一步重新路由：不沿用 read_only=true、write_content=false 和已经交付过的 scope。
- [新作品的第一条消息]：先按作者的要求写出来，再在结尾给方向；不要因为信息少就只给建议。

只输出一个 JSON 对象，不要任何解释或代码块，例如：
{"current_agent":"writer","workflow_plan":"quick","write_content":true,"read_only":false,"scope":"写第一章","requested_file_types":["draft"]}`;

/** Added to the first message's model input only (docs/agent-behaviour.md `first_message_hint`); never stored. */
export const FIRST_MESSAGE_HINT =
  '这是作者在这部作品里的第一条消息：先按作者的要求把内容写出来，结尾再给一两个可以继续的方向。';

export const ASSISTANT_TAIL_CHARS = 600;

export interface RouterMessageInputs {
  message: string;
  /** The previous assistant reply, when the session has one. */
  previousAssistant?: string;
  /** A one-line summary of how the previous run ended (the status card). */
  statusCard?: string;
  /** The previous routing as one JSON line. */
  previousRouting?: string;
  /** Set (to the work's type) on the author's first message in this work. */
  firstMessageProjectLabel?: string;
}

export function buildRouterUserMessage(inputs: RouterMessageInputs): string {
  const words = `[用户本轮原话]\n${inputs.message}`;
  if (inputs.firstMessageProjectLabel !== undefined) {
    return `[新作品的第一条消息]\n作品类型：${inputs.firstMessageProjectLabel}\n\n${words}\n\n${FIRST_MESSAGE_HINT}`;
  }
  if (inputs.previousAssistant === undefined) return words;
  const tail = [...inputs.previousAssistant].slice(-ASSISTANT_TAIL_CHARS).join('');
  const card = inputs.statusCard ? `\n${inputs.statusCard}` : '';
  const routing = inputs.previousRouting ? `\n\n[上一轮路由]\n${inputs.previousRouting}` : '';
  return `[上一轮助手结尾]\n${tail}${card}${routing}\n\n${words}`;
}
