import type { Breadcrumbs, ContextTier } from '@quill/contracts';
import type { UnacceptedState } from '@quill/db';

/**
 * Everything the model reads about project files is rendered here, in the seed's exact forms:
 * `标题 (id=…) [全文]`, `[已截断：显示 x/y 字；全文用 query_files(id="…")]` and retrieval snippets
 * marked `[检索片段，非全文…]`. [全文] means the file's whole content as of this request.
 */
export function fullHeader(title: string, id: string, unaccepted?: UnacceptedState | null): string {
  if (unaccepted) return `${title} (id=${id}) ${DRAFT_LABELS[unaccepted]}[完整草稿，不是定稿]`;
  return `${title} (id=${id}) [全文]`;
}

export function truncatedHeader(
  title: string,
  id: string,
  shownChars: number,
  totalChars: number,
  unaccepted?: UnacceptedState | null,
): string {
  const label = unaccepted ? DRAFT_LABELS[unaccepted] : '';
  return `${title} (id=${id}) ${label}[已截断：显示 ${shownChars}/${totalChars} 字；全文用 query_files(id="${id}")]`;
}

export function snippetHeader(
  title: string,
  id: string,
  start: number,
  end: number,
  totalChars: number,
  unaccepted?: UnacceptedState | null,
): string {
  const label = unaccepted ? DRAFT_LABELS[unaccepted] : '';
  return `${title} (id=${id}) ${label}[检索片段，非全文：第 ${start + 1}–${end} 字，共 ${totalChars} 字；全文用 query_files(id="${id}")]`;
}

/**
 * An AI text the author has not accepted is a draft, never the fact (docs/kernel.md "Artifacts
 * and acceptance"): its header says so in place of [全文], by state.
 */
export const DRAFT_LABELS: Record<UnacceptedState, string> = {
  drafted: '[AI 草稿，待作者验收]',
  under_review: '[AI 草稿，审阅中，待作者验收]',
  revision_requested: '[AI 草稿，作者已要求返修]',
};

export function inWorkingSetLine(title: string, id: string): string {
  return `${title} (id=${id}) [全文见本消息的 <working_set>]`;
}

export function itemBlock(header: string, body: string): string {
  return body ? `${header}\n${body}` : header;
}

export const TIER_HEADINGS: Record<ContextTier, string> = {
  critical: '#### CRITICAL（焦点、审阅对象与作者引用）',
  constraint: '#### CONSTRAINT（角色、核心设定、大纲、前一章）',
  relevant: '#### RELEVANT（相邻章节、其他设定、检索片段）',
  inspiration: '#### INSPIRATION（灵感与备注）',
};

export interface TurnContextParts {
  narrativeConstraints: string;
  chosenSkills: string[];
  /** The assembled project context: world model, file index, tiered items. */
  projectContext: string;
  currentFile: string | null;
  taskBoard: string;
  languageLine: string;
}

/** `<turn_context>` leads the author's message; empty sections are left out. */
export function renderTurnContext(parts: TurnContextParts): string {
  const sections: string[] = [];
  if (parts.narrativeConstraints.trim()) sections.push(`## 叙事约束\n${parts.narrativeConstraints.trim()}`);
  if (parts.chosenSkills.length > 0) sections.push(`## 本轮选用的技能\n${parts.chosenSkills.join('\n\n')}`);
  if (parts.projectContext) sections.push(`## 项目上下文\n${parts.projectContext}`);
  if (parts.currentFile) sections.push(`## 当前文件\n${parts.currentFile}`);
  if (parts.taskBoard) sections.push(`## 任务板\n${parts.taskBoard}`);
  sections.push(`## 本轮回复语言\n${parts.languageLine}`);
  return `<turn_context>\n${sections.join('\n\n')}\n</turn_context>`;
}

export function renderWorkingSet(blocks: string[]): string {
  if (blocks.length === 0) return '';
  return `<working_set>\n[跨轮工作集：最近两轮回复读写过的文件，按当前内容整份给出]\n\n${blocks.join('\n\n')}\n</working_set>`;
}

/**
 * The user message: the run's turn context, the working set, what only this role sees, then the
 * author's own words. The turn context is the same bytes for every role and step of a run.
 */
export function renderUserMessage(
  turnContext: string,
  workingSet: string,
  message: string,
  roleContext = '',
): string {
  return [turnContext, workingSet, roleContext, message].filter(Boolean).join('\n\n');
}

/**
 * `<role_context>`: the project context only this role may see (its private files, the reviewer's
 * review targets), kept out of the shared turn context so that stays identical across roles.
 */
export function renderRoleContext(context: string, currentFile: string | null): string {
  const sections = ['[只给本角色的上下文：本角色的私有文件与本轮的审阅对象]'];
  if (context) sections.push(context);
  if (currentFile) sections.push(`## 当前文件\n${currentFile}`);
  return `<role_context>\n${sections.join('\n\n')}\n</role_context>`;
}

const BREADCRUMB_LABELS: Array<[keyof Omit<Breadcrumbs, 'v'>, string]> = [
  ['created', '创建'],
  ['edited', '编辑'],
  ['deleted', '删除'],
  ['read', '读取全文'],
];

/** 「[此前的工具操作]」 after an assistant message: replayed history has no tool results. */
export function renderBreadcrumbs(breadcrumbs: Breadcrumbs): string {
  const lines: string[] = [];
  for (const [key, label] of BREADCRUMB_LABELS) {
    for (const file of breadcrumbs[key]) lines.push(`- ${label}：${file.title} (id=${file.file_id})`);
  }
  return lines.length > 0 ? `[此前的工具操作]\n${lines.join('\n')}` : '';
}

export function withBreadcrumbs(content: string, breadcrumbs: Breadcrumbs | null): string {
  const rendered = breadcrumbs ? renderBreadcrumbs(breadcrumbs) : '';
  if (!rendered) return content;
  return content ? `${content}\n\n${rendered}` : rendered;
}

export function summaryMessage(summary: string, archive: { title: string; id: string } | null): string {
  const where = archive
    ? `\n被压缩的完整原文已存档：${archive.title} (id=${archive.id})，需要细节时用 query_files(id="${archive.id}") 读取。`
    : '';
  return `[此前对话摘要]\n${summary.trim()}${where}`;
}
