import { isUuid } from './ids.ts';
import type { Queryable } from './pool.ts';

/**
 * The history archive file of a session (docs/agent-behaviour.md invariant 5): where compacted
 * messages are kept in full, in the project, for the agent (query_files) and the author. The
 * context service names it and keeps each compaction's section; the workers write the file
 * (libs/db/src/workers/history-archive.ts). These are the names both sides agree on.
 */
export const HISTORY_ARCHIVE_FILE_TYPE = 'history_archive';
export const HISTORY_ARCHIVE_FOLDER = '.quill';

/** The title a new archive file gets (the author may rename it later). */
export function historyArchiveTitle(sessionId: string): string {
  return `对话存档 ${sessionId.slice(0, 8)}`;
}

/** The first line of a new archive file. */
export function historyArchiveHeader(sessionId: string): string {
  return `# 对话存档（会话 ${sessionId}）`;
}

/** The write key of one compaction's section: the same section is never appended twice. */
export function historyArchiveWriteKey(compactionId: string): string {
  return `history_archive:${compactionId}`;
}

/**
 * The title to name a compaction's archive by in the prompt: the file's own (it may have been
 * renamed), the title it will get when no worker has written it yet, or undefined when the author
 * deleted it (the summary then names no file).
 */
export async function historyArchiveTitleOf(
  db: Queryable,
  input: { projectId: string; sessionId: string; fileId: string },
): Promise<string | undefined> {
  if (!isUuid(input.projectId) || !isUuid(input.fileId)) return undefined;
  const { rows } = await db.query<{ title: string; deleted: boolean; project_id: string }>(
    'SELECT title, deleted, project_id FROM files WHERE id = $1',
    [input.fileId],
  );
  const file = rows[0];
  if (!file) return historyArchiveTitle(input.sessionId);
  return file.deleted || file.project_id !== input.projectId ? undefined : file.title;
}
