import type { TraceExcluded, TraceLoaded } from '@quill/contracts';
import type { HistoryMessage, UnacceptedState } from '@quill/db';
import type { TokenCounter } from './budget.ts';
import { parseBreadcrumbs } from './history.ts';
import { fullHeader, itemBlock } from './render.ts';

/**
 * The cross-turn working set (docs/agent-behaviour.md 跨轮记忆): the files the last two assistant replies created,
 * edited or read whole, injected whole from their current content before the author's words.
 * It lives in the user message, never in the system prompt or history, so the cached prefix is
 * untouched. Files the role may not see are skipped (the compiler passes only visible ones).
 */
export const WORKING_SET_REPLIES = 2;

export interface WorkingSetSettings {
  maxFiles: number;
  maxChars: number;
}

export interface WorkingSet {
  ids: Set<string>;
  blocks: string[];
  loaded: TraceLoaded[];
  excluded: TraceExcluded[];
}

/** File ids the last replies touched, most recent reply first, each once. */
export function workingSetCandidates(
  recent: readonly HistoryMessage[],
): Array<{ id: string; title: string }> {
  const replies = recent
    .filter((message) => message.role === 'assistant')
    .slice(-WORKING_SET_REPLIES)
    .reverse();
  const files: Array<{ id: string; title: string }> = [];
  for (const reply of replies) {
    const crumbs = parseBreadcrumbs(reply.breadcrumbs);
    if (!crumbs) continue;
    for (const file of [...crumbs.edited, ...crumbs.created, ...crumbs.read]) {
      if (!files.some((known) => known.id === file.file_id))
        files.push({ id: file.file_id, title: file.title });
    }
  }
  return files;
}

/**
 * Pure: `contents` holds the current text of the visible candidates. `required` are files the
 * run's turn context already refers to as shown in the working set: they stay in it even if
 * they grew past the limits since, so that reference never points at nothing.
 */
export function buildWorkingSet(input: {
  recent: readonly HistoryMessage[];
  visible: ReadonlyMap<string, { title: string; permission: string; unaccepted?: UnacceptedState | null }>;
  contents: ReadonlyMap<string, string>;
  settings: WorkingSetSettings;
  count: TokenCounter;
  required?: ReadonlySet<string>;
}): WorkingSet {
  const result: WorkingSet = { ids: new Set(), blocks: [], loaded: [], excluded: [] };
  const wanted = workingSetCandidates(input.recent);
  const visibleIds = wanted.filter((file) => input.visible.has(file.id)).map((file) => file.id);
  for (const file of wanted) {
    if (input.visible.has(file.id)) continue;
    // Deleted since, or not visible to this role: either way it is not shown.
    result.excluded.push({
      source: 'working_set',
      file_id: file.id,
      title: file.title,
      reason: 'visibility',
      detail: 'deleted or not visible to this role',
    });
  }
  const { contents } = input;
  let chars = 0;
  for (const id of visibleIds) {
    const file = input.visible.get(id)!;
    const content = contents.get(id) ?? '';
    const base = { source: 'working_set' as const, file_id: id, title: file.title };
    const overLimit =
      result.ids.size >= input.settings.maxFiles || chars + content.length > input.settings.maxChars;
    if (overLimit && !input.required?.has(id)) {
      result.excluded.push({
        ...base,
        reason: 'limit',
        detail: result.ids.size >= input.settings.maxFiles ? 'max files' : 'max chars',
        total_chars: content.length,
      });
      continue;
    }
    chars += content.length;
    result.ids.add(id);
    const header = fullHeader(file.title, id, file.unaccepted);
    result.blocks.push(itemBlock(header, content));
    result.loaded.push({
      ...base,
      shown_chars: content.length,
      total_chars: content.length,
      // Header and content apart: the content's count is cached across compiles.
      tokens: input.count(header) + input.count(content) + 1,
      full: true,
      permission: file.permission,
    });
  }
  return result;
}
