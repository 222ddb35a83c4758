import type { ChatMessage, ContextCompileReply, ContextCompileRequest } from '@quill/contracts';
import { getFile, getProject, listMessages, type ProjectFile } from '@quill/db';
import type { Pool } from 'pg';
import { languageLine, replyLanguage, systemPrompt } from './prompts.ts';

export interface CompilerSettings {
  /** Rough character budgets until the token-accurate compiler (context issue) replaces them. */
  historyChars: number;
  contextChars: number;
}

/**
 * Assembles what a role sees: [system prompt][history][turn context + the author's words]. The
 * project and every file are looked up within the run's project, so a focus id from another
 * project is simply not found.
 */
export function createContextCompiler(pool: Pool, settings: CompilerSettings) {
  return async function compile(request: ContextCompileRequest): Promise<ContextCompileReply> {
    const project = await getProject(pool, request.project_id);
    if (!project) return { v: 1, ok: false, code: 'not_found' };
    const history = await listMessages(pool, request.session_id, { limit: 200 });
    // The current author message is already the last stored one; it is sent as the turn itself.
    const previous = history.filter((message) => message.runId !== request.run_id);
    const files = await loadFiles(pool, request.project_id, [
      ...(request.focus_file_id ? [request.focus_file_id] : []),
      ...request.attached_file_ids,
    ]);

    const messages: ChatMessage[] = [{ role: 'system', content: systemPrompt(project) }];
    for (const message of trimToBudget(previous, settings.historyChars)) {
      messages.push({ role: message.role, content: message.content });
    }
    messages.push({ role: 'user', content: turnContent(request, files, settings.contextChars) });
    return { v: 1, ok: true, messages };
  };
}

async function loadFiles(pool: Pool, projectId: string, ids: string[]): Promise<ProjectFile[]> {
  const unique = [...new Set(ids)];
  const files = await Promise.all(unique.map((id) => getFile(pool, projectId, id)));
  return files.filter((file): file is ProjectFile => file !== null);
}

function trimToBudget<T extends { content: string }>(messages: T[], budget: number): T[] {
  const kept: T[] = [];
  let used = 0;
  for (let index = messages.length - 1; index >= 0; index--) {
    const message = messages[index]!;
    used += message.content.length;
    if (used > budget) break;
    kept.unshift(message);
  }
  return kept;
}

function turnContent(request: ContextCompileRequest, files: ProjectFile[], budget: number): string {
  const parts: string[] = ['<turn_context>'];
  let remaining = budget;
  for (const file of files) {
    const shown = file.content.slice(0, Math.max(0, remaining));
    remaining -= shown.length;
    const label =
      shown.length === file.content.length
        ? '[全文]'
        : `[已截断：显示 ${shown.length}/${file.content.length} 字；全文用 query_files(id="${file.id}")]`;
    parts.push(`${file.title} (id=${file.id}) ${label}\n${shown}`);
  }
  parts.push(languageLine(replyLanguage(request.message, request.ui_language)), '</turn_context>');
  return `${parts.join('\n\n')}\n\n${request.message}`;
}
