import { isUuid } from '../ids.ts';
import type { Queryable } from '../pool.ts';

/**
 * Soft-deletes the given files when they are still empty and never written (version 0): the
 * empty-file round's file inside its step's fence, and after a run ended the blank files of a
 * refunded round or a read-only request (`BlankFilesTask`). The check on content and version is
 * the compare-and-set: a file anyone wrote in the meantime stays.
 */
export async function deleteEmptyFiles(
  db: Queryable,
  projectId: string,
  fileIds: readonly string[],
): Promise<string[]> {
  const ids = fileIds.filter(isUuid);
  if (!isUuid(projectId) || ids.length === 0) return [];
  const { rows } = await db.query<{ id: string }>(
    `UPDATE files SET deleted = true, updated_at = now()
     WHERE project_id = $1 AND id = ANY($2::uuid[]) AND content = '' AND version = 0 AND NOT deleted
     RETURNING id`,
    [projectId, ids],
  );
  return rows.map((row) => row.id);
}
