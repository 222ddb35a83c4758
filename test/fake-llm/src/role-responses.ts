import type { ChatRequestMessage } from './chat-request.ts';
import { CHAPTER_TITLE, chapterBody, HOOK_TITLE, hookBody, OUTLINE_TITLE, outlineBody } from './prose.ts';
import type { TextStep } from './script-schema.ts';

/** The roles the Quill services announce in `x-quill-role`. */
export const FAKE_LLM_ROLES = [
  'router',
  'planner',
  'hook_designer',
  'writer',
  'quality_reviewer',
  'suggest',
  'summarize',
] as const;

export const ROUTER_DECISION = {
  current_agent: 'writer',
  workflow_plan: 'quick',
  write_content: true,
  read_only: false,
  scope: '写第一章',
  requested_file_types: ['draft'],
} as const;

export const SUGGESTIONS = ['继续写第二章', '给老人补一段往事', '检查第一章的节奏'] as const;

interface FileTask {
  title: string;
  fileType: string;
  announce: string;
  body: () => string;
  wrapUp: string;
}

const FILE_TASKS: Record<string, FileTask> = {
  writer: {
    title: CHAPTER_TITLE,
    fileType: 'draft',
    announce: '好的，我先创建第一章的草稿文件，然后写正文。',
    body: chapterBody,
    wrapUp: '第一章初稿已完成：林晚在雨夜的旧书店里找到了母亲留下的日记。',
  },
  planner: {
    title: OUTLINE_TITLE,
    fileType: 'outline',
    announce: '好的，我先建立全书大纲文件，再把章节规划写进去。',
    body: outlineBody,
    wrapUp: '大纲已完成，共六章，主线围绕日记缺失的最后一页展开。',
  },
  hook_designer: {
    title: HOOK_TITLE,
    fileType: 'outline',
    announce: '好的，我先创建钩子设计文件，再写开篇悬念。',
    body: hookBody,
    wrapUp: '钩子设计已完成：开篇日记、缺页和铜铃三处悬念。',
  },
};

/**
 * What a well-behaved model of each role would answer, following the two-reply file protocol:
 * first a `create_file` call, then (after its tool result) the body inside `<file>` tags.
 */
export function defaultStep(role: string | undefined, messages: readonly ChatRequestMessage[]): TextStep {
  const task = role === undefined ? undefined : FILE_TASKS[role];
  if (task !== undefined) return fileTaskStep(task, messages);
  switch (role) {
    case 'quality_reviewer':
      return text('审查结论：通过。\n节奏紧凑，人物动机清楚；结尾的悬念可以再收紧一些。');
    case 'router':
      return text(JSON.stringify(ROUTER_DECISION));
    case 'suggest':
      return text(JSON.stringify(SUGGESTIONS));
    case 'summarize':
      return text('本轮完成了第一章初稿：林晚在雨夜的旧书店里发现母亲失踪当天的日记，最后一页被人裁掉。');
    default:
      return text('好的，收到。');
  }
}

function fileTaskStep(task: FileTask, messages: readonly ChatRequestMessage[]): TextStep {
  // An author who names the file (写《…》) gets that title, so concurrent runs in one project
  // (benchmarks) each write their own file.
  const title = requestedTitle(messages) ?? task.title;
  if (!awaitsFileBody(messages)) {
    return {
      text: task.announce,
      tool_calls: [{ name: 'create_file', arguments: { title, file_type: task.fileType } }],
    };
  }
  return text(`<file>\n${task.body()}\n</file>\n${task.wrapUp}`);
}

function requestedTitle(messages: readonly ChatRequestMessage[]): string | undefined {
  for (const message of messages.toReversed()) {
    if (message.role !== 'user' || typeof message.content !== 'string') continue;
    const named = /写《([^》\n]{1,60})》/.exec(message.content);
    if (named) return named[1];
  }
  return undefined;
}

/**
 * True when the latest assistant turn called tools and their results came back. Looking at the
 * latest assistant message (not the last message) keeps this right when a steering message from
 * the author was appended after the tool result.
 */
function awaitsFileBody(messages: readonly ChatRequestMessage[]): boolean {
  const lastAssistant = messages.findLastIndex((message) => message.role === 'assistant');
  if (lastAssistant === -1) return false;
  if ((messages[lastAssistant]?.tool_calls?.length ?? 0) === 0) return false;
  return messages.slice(lastAssistant + 1).some((message) => message.role === 'tool');
}

function text(value: string): TextStep {
  return { text: value };
}
