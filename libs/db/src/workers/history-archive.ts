import type pg from 'pg';
import {
  HISTORY_ARCHIVE_FILE_TYPE,
  HISTORY_ARCHIVE_FOLDER,
  historyArchiveHeader,
  historyArchiveTitle,
  historyArchiveWriteKey,
} from '../history-archive.ts';
import { isUuid } from '../ids.ts';
import type { Queryable } from '../pool.ts';
import { withTransaction } from '../pool.ts';
import { createFile, saveFileContent } from '../shared-tables/files.ts';

interface PendingSection {
  id: string;
  archive_file_id: string;
  archive_section: string;
}

/**
 * Sections of the session's compactions not yet in their archive file: no version row with the
 * section's write key, and the file not deleted by the author (a deleted archive stays deleted;
 * the next compaction names a new one). One indexed read, nothing found for a session that was
 * never compacted.
 */
function pendingSections(db: Queryable, sessionId: string): Promise<{ rows: PendingSection[] }> {
  return db.query<PendingSection>(
    `SELECT c.id, c.archive_file_id, c.archive_section FROM history_compactions c
     WHERE c.session_id = $1 AND c.archive_file_id IS NOT NULL AND c.archive_section IS NOT NULL
       AND NOT EXISTS (SELECT 1 FROM file_versions v WHERE v.write_key = 'history_archive:' || c.id::text)
       AND NOT EXISTS (SELECT 1 FROM files f WHERE f.id = c.archive_file_id AND f.deleted)
     ORDER BY c.through_seq`,
    [sessionId],
  );
}

/**
 * Writes the session's history archive (docs/agent-behaviour.md invariant 5): every compaction
 * section the context service stored and no step has written yet is appended to the archive
 * file it named, creating the file under that id the first time. The workers are the only
 * writer of the AI's files (docs/decisions/0022-two-writer-tables-and-their-guards.md), so the
 * context service only names the file and keeps the text. Idempotent: each section is one
 * version with write key `history_archive:<compaction id>`, and a lock per session makes a racing
 * step (a takeover, the next run) wait and then find it written. Appending keeps whatever the
 * author changed in the file. Not fenced on purpose: the archive is the session's, not the run's
 * (undo of the run does not take it back), and any step may write it. Returns the files written.
 */
export async function writeHistoryArchive(
  pool: pg.Pool,
  input: { sessionId: string; projectId: string; runId: string },
): Promise<string[]> {
  if (!isUuid(input.sessionId) || !isUuid(input.projectId)) return [];
  if ((await pendingSections(pool, input.sessionId)).rows.length === 0) return [];
  return withTransaction(pool, async (client) => {
    await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`history_archive:${input.sessionId}`]);
    const written = new Set<string>();
    for (const section of (await pendingSections(client, input.sessionId)).rows) {
      const writeKey = historyArchiveWriteKey(section.id);
      const { rows } = await client.query<{ content: string; project_id: string }>(
        'SELECT content, project_id FROM files WHERE id = $1 FOR UPDATE',
        [section.archive_file_id],
      );
      const file = rows[0];
      if (file && file.project_id !== input.projectId) continue;
      if (file) {
        await saveFileContent(client, {
          fileId: section.archive_file_id,
          content: `${file.content}\n\n${section.archive_section}`,
          source: 'ai',
          runId: input.runId,
          projectId: input.projectId,
          writeKey,
        });
      } else {
        await createFile(client, {
          id: section.archive_file_id,
          projectId: input.projectId,
          title: historyArchiveTitle(input.sessionId),
          fileType: HISTORY_ARCHIVE_FILE_TYPE,
          folder: HISTORY_ARCHIVE_FOLDER,
          content: `${historyArchiveHeader(input.sessionId)}\n\n${section.archive_section}`,
          source: 'ai',
          runId: input.runId,
          writeKey,
        });
      }
      written.add(section.archive_file_id);
    }
    return [...written];
  });
}
