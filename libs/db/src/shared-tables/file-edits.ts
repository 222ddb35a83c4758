import { isUuid } from '../ids.ts';
import type { Queryable } from '../pool.ts';
import {
  FILE_COLUMNS,
  type FileRow,
  type FileVersion,
  type FileVersionRow,
  type ProjectFile,
  toFile,
  toFileVersion,
  type VersionSource,
} from './files.ts';

/**
 * File operations the agent tools and the author's file API need beyond plain CRUD: row locks
 * for read-compare-write, optimistic saves, same-folder title lookups and folder-wide deletes.
 */

/**
 * The live file, locked FOR UPDATE until the caller's transaction ends, so a compare (what the
 * model last read) and the write that follows it see the same text.
 */
export async function lockFile(
  db: Queryable,
  projectId: string,
  fileId: string,
): Promise<ProjectFile | null> {
  if (!isUuid(projectId) || !isUuid(fileId)) return null;
  const { rows } = await db.query<FileRow>(
    `SELECT ${FILE_COLUMNS} FROM files f WHERE f.project_id = $1 AND f.id = $2 AND NOT f.deleted
     FOR UPDATE`,
    [projectId, fileId],
  );
  return rows[0] ? toFile(rows[0]) : null;
}

/**
 * Saves only when the file is still at `expectedVersion` (optimistic concurrency for the author's
 * editor). Returns the new version, or null when the file moved on or does not exist.
 */
export async function saveFileContentIfVersion(
  db: Queryable,
  input: {
    projectId: string;
    fileId: string;
    content: string;
    expectedVersion: number;
    source: VersionSource;
    runId?: string | null;
  },
): Promise<number | null> {
  if (!isUuid(input.projectId) || !isUuid(input.fileId)) return null;
  const { rows } = await db.query<{ version: number }>(
    `WITH f AS (
       UPDATE files SET content = $3, version = version + 1, updated_at = now(),
         author_saved = author_saved OR $5 = 'author'
       WHERE project_id = $1 AND id = $2 AND NOT deleted AND version = $4
       RETURNING id, version, content
     )
     INSERT INTO file_versions (file_id, version, content, source, run_id)
     SELECT id, version, content, $5::text, $6::uuid FROM f
     RETURNING version`,
    [input.projectId, input.fileId, input.content, input.expectedVersion, input.source, input.runId ?? null],
  );
  return rows[0]?.version ?? null;
}

/** A live file with exactly this folder and title (the same-name file create_file would reuse). */
export async function findFileByTitle(
  db: Queryable,
  projectId: string,
  folder: string,
  title: string,
): Promise<ProjectFile | null> {
  if (!isUuid(projectId)) return null;
  const { rows } = await db.query<FileRow>(
    `SELECT ${FILE_COLUMNS} FROM files f
     WHERE f.project_id = $1 AND f.folder = $2 AND f.title = $3 AND NOT f.deleted
     ORDER BY f.created_at LIMIT 1`,
    [projectId, folder, title],
  );
  return rows[0] ? toFile(rows[0]) : null;
}

/** Changes only the title: id, content and version history stay as they are. */
export async function setFileTitle(db: Queryable, fileId: string, title: string): Promise<void> {
  await db.query('UPDATE files SET title = $2, updated_at = now() WHERE id = $1', [fileId, title]);
}

/** Live files in a folder and every folder below it (`a` covers `a` and `a/b`), locked. */
export async function lockFilesUnderFolder(
  db: Queryable,
  projectId: string,
  folder: string,
): Promise<ProjectFile[]> {
  if (!isUuid(projectId)) return [];
  const { rows } = await db.query<FileRow>(
    `SELECT ${FILE_COLUMNS} FROM files f
     WHERE f.project_id = $1 AND NOT f.deleted AND (f.folder = $2 OR starts_with(f.folder, $2 || '/'))
     ORDER BY f.folder, f.title FOR UPDATE`,
    [projectId, folder],
  );
  return rows.map(toFile);
}

/** Soft-deletes the given files of the project; returns how many were live. */
export async function softDeleteFiles(db: Queryable, projectId: string, fileIds: string[]): Promise<number> {
  if (!isUuid(projectId) || fileIds.length === 0) return 0;
  const { rowCount } = await db.query(
    `UPDATE files SET deleted = true, updated_at = now()
     WHERE project_id = $1 AND id = ANY($2::uuid[]) AND NOT deleted`,
    [projectId, fileIds.filter(isUuid)],
  );
  return rowCount ?? 0;
}

export interface FileTextMatch {
  file: ProjectFile;
  /** Character offset of the first content match, or -1 when only the title matched. */
  contentMatchAt: number;
}

/** Case-insensitive substring search over titles and content (trigram-indexed). */
export async function findFilesByText(
  db: Queryable,
  projectId: string,
  query: string,
  limit = 20,
): Promise<FileTextMatch[]> {
  if (!isUuid(projectId) || query === '') return [];
  const pattern = `%${query.replace(/[\\%_]/g, (character) => `\\${character}`)}%`;
  const { rows } = await db.query<FileRow & { match_at: number }>(
    `SELECT ${FILE_COLUMNS}, strpos(lower(f.content), lower($2)) - 1 AS match_at FROM files f
     WHERE f.project_id = $1 AND NOT f.deleted AND (f.title ILIKE $3 OR f.content ILIKE $3)
     ORDER BY (f.title ILIKE $3) DESC, f.updated_at DESC LIMIT $4`,
    [projectId, query, pattern, limit],
  );
  return rows.map((row) => ({ file: toFile(row), contentMatchAt: row.match_at }));
}

/** The newest version row written by the given source, or null. */
export async function latestVersionBySource(
  db: Queryable,
  fileId: string,
  source: VersionSource,
): Promise<FileVersion | null> {
  if (!isUuid(fileId)) return null;
  const { rows } = await db.query<FileVersionRow>(
    `SELECT id, file_id, version, content, source, run_id, partial_reason, created_at FROM file_versions
     WHERE file_id = $1 AND source = $2 ORDER BY version DESC LIMIT 1`,
    [fileId, source],
  );
  return rows[0] ? toFileVersion(rows[0]) : null;
}

/** Whether any author version came after `version` (the AI's last write). */
export async function hasAuthorVersionAfter(
  db: Queryable,
  fileId: string,
  version: number,
): Promise<boolean> {
  const { rows } = await db.query(
    `SELECT 1 FROM file_versions WHERE file_id = $1 AND source = 'author' AND version > $2 LIMIT 1`,
    [fileId, version],
  );
  return rows.length > 0;
}

/** Sets a live file's visibility (the format is checked by the caller); false when no such file. */
export async function setFileVisibility(
  db: Queryable,
  projectId: string,
  fileId: string,
  visibility: string,
): Promise<boolean> {
  if (!isUuid(projectId) || !isUuid(fileId)) return false;
  const { rowCount } = await db.query(
    'UPDATE files SET visibility = $3, updated_at = now() WHERE project_id = $1 AND id = $2 AND NOT deleted',
    [projectId, fileId, visibility],
  );
  return rowCount === 1;
}
