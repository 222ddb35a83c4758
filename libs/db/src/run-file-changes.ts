import { isUuid } from './ids.ts';
import type { Queryable } from './pool.ts';

/**
 * Each file's text as it was before the run's first write to it: the newest version older than
 * the run's first version, or '' when the run created the file. The review evidence diffs it
 * against the stored text to find the part this request changed (docs/agent-behaviour.md
 * 「送审证据」). Files the run never wrote are absent from the map.
 */
export async function getPreRunContents(
  db: Queryable,
  runId: string,
  fileIds: readonly string[],
): Promise<Map<string, string>> {
  const ids = [...new Set(fileIds)].filter(isUuid);
  if (!isUuid(runId) || ids.length === 0) return new Map();
  const { rows } = await db.query<{ file_id: string; content: string | null }>(
    `SELECT first.file_id, before.content
     FROM (
       SELECT file_id, min(version) AS version FROM file_versions
       WHERE run_id = $1 AND file_id = ANY($2::uuid[]) GROUP BY file_id
     ) first
     LEFT JOIN LATERAL (
       SELECT v.content FROM file_versions v
       WHERE v.file_id = first.file_id AND v.version < first.version
       ORDER BY v.version DESC LIMIT 1
     ) before ON true`,
    [runId, ids],
  );
  return new Map(rows.map((row) => [row.file_id, row.content ?? '']));
}
