import type { TaskEnvelope } from '@quill/contracts';

/**
 * Shared protocol text every role obeys (docs/agent-behaviour.md `prompts/base.py` `UNIFIED_EXECUTION_PROTOCOL`).
 * Saying "saved / restored / changed" is governed here, not detected in text afterwards.
 */
export const UNIFIED_EXECUTION_PROTOCOL = [
  '## 执行协议',
  '- 只有本轮对应的工具调用成功之后，才能说「已保存 / 已还原 / 已修改」；没改就直说没改。',
  '- 写文件分两次回复：先调用 create_file 建空文件，下一条回复以 <file> 开头写正文、以 </file> 结束；一次只写一个文件。',
  '- 需要作者回答才能继续时调用 request_clarification；需要别的角色接手时调用 handoff_to_agent。文字里的问号不会让流程停下。',
  '- 回复语言以 <turn_context> 里写明的本轮语言为准。',
].join('\n');

export const RUN_DIRECTIVE_HEADING = '[本次运行的系统指令]';

/**
 * The run's last input message: the protocol, the role's own prompt and the router's directive
 * (scope constraint and handoff packet). Built per run and never stored in history.
 */
export function composeDirective(rolePrompt: string, task: Pick<TaskEnvelope, 'directive'>): string {
  const parts = [RUN_DIRECTIVE_HEADING, UNIFIED_EXECUTION_PROTOCOL, rolePrompt];
  if (task.directive?.trim()) parts.push(task.directive.trim());
  return parts.join('\n\n');
}
