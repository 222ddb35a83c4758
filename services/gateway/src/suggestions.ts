import { type ChatMessage, MAX_SUGGESTIONS } from '@quill/contracts';

/**
 * The suggestion prompt (docs/agent-behaviour.md `prompts/suggestions.py`): a few short next steps the author
 * could send as their next message, in the author's language, as a JSON array of strings.
 */
const SUGGESTION_SYSTEM_PROMPT = [
  '你是小说写作助手的“下一步建议”生成器。根据项目和最近的对话，给作者 3 条可以直接发送的下一步指令。',
  '每条不超过 30 个字，具体、可执行，和作者最近的语言一致，不要重复已经完成的事。',
  '只输出一个 JSON 字符串数组，例如 ["继续写第二章","检查第一章的节奏","给主角补一段往事"]，不要任何其他文字。',
].join('\n');

const HISTORY_MESSAGES = 6;
const HISTORY_MESSAGE_CHARS = 600;
const MAX_FILES_LISTED = 30;
const MAX_SUGGESTION_CHARS = 120;

export interface SuggestionContext {
  projectTitle: string;
  files: ReadonlyArray<{ title: string; fileType: string }>;
  history: ReadonlyArray<{ role: 'user' | 'assistant'; content: string }>;
}

export function buildSuggestionMessages(context: SuggestionContext): ChatMessage[] {
  const files = context.files
    .slice(0, MAX_FILES_LISTED)
    .map((file) => `- ${file.title} (${file.fileType})`)
    .join('\n');
  const history = context.history
    .slice(-HISTORY_MESSAGES)
    .map(
      (message) =>
        `${message.role === 'user' ? '作者' : '助手'}：${message.content.slice(0, HISTORY_MESSAGE_CHARS)}`,
    )
    .join('\n');
  const parts = [
    `项目：${context.projectTitle}`,
    `文件：\n${files || '（还没有文件）'}`,
    `最近的对话：\n${history || '（还没有对话）'}`,
    '请给出下一步建议。',
  ];
  return [
    { role: 'system', content: SUGGESTION_SYSTEM_PROMPT },
    { role: 'user', content: parts.join('\n\n') },
  ];
}

/**
 * Reads the model's answer leniently: the first JSON array of strings in it (models sometimes
 * wrap it in a code fence or a sentence), else one suggestion per non-empty line.
 */
export function parseSuggestions(text: string): string[] {
  const fromJson = firstJsonArray(text);
  const raw = fromJson ?? text.split('\n').map((line) => line.replace(/^\s*(?:[-*•]|\d+[.)、])\s*/, ''));
  const seen = new Set<string>();
  const suggestions: string[] = [];
  for (const item of raw) {
    const suggestion = item.trim().slice(0, MAX_SUGGESTION_CHARS);
    if (suggestion === '' || suggestion.startsWith('```') || seen.has(suggestion)) continue;
    seen.add(suggestion);
    suggestions.push(suggestion);
    if (suggestions.length === MAX_SUGGESTIONS) break;
  }
  return suggestions;
}

function firstJsonArray(text: string): string[] | undefined {
  const start = text.indexOf('[');
  const end = text.lastIndexOf(']');
  if (start < 0 || end <= start) return undefined;
  try {
    const value: unknown = JSON.parse(text.slice(start, end + 1));
    if (!Array.isArray(value)) return undefined;
    return value.filter((item): item is string => typeof item === 'string');
  } catch {
    return undefined;
  }
}
