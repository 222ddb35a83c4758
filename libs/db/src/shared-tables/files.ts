import { isUuid } from '../ids.ts';
import type { Queryable } from '../pool.ts';

export type VersionSource = 'author' | 'ai';

export interface ProjectFile {
  id: string;
  projectId: string;
  folder: string;
  title: string;
  fileType: string;
  content: string;
  version: number;
  authorSaved: boolean;
  deleted: boolean;
  visibility: string;
  /** Set on an AI draft: the file whose body it would have replaced (docs/ai-writes.md). */
  draftOf: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface FileVersion {
  id: string;
  fileId: string;
  version: number;
  content: string;
  source: VersionSource;
  runId: string | null;
  /** Why this version holds an incomplete body; null when it is complete. */
  partialReason: string | null;
  createdAt: string;
}

export interface FileRow {
  id: string;
  project_id: string;
  folder: string;
  title: string;
  file_type: string;
  content: string;
  version: number;
  author_saved: boolean;
  deleted: boolean;
  visibility: string;
  draft_of: string | null;
  created_at: string;
  updated_at: string;
}

export interface FileVersionRow {
  id: string;
  file_id: string;
  version: number;
  content: string;
  source: VersionSource;
  run_id: string | null;
  partial_reason: string | null;
  created_at: string;
}

export const FILE_COLUMNS =
  'f.id, f.project_id, f.folder, f.title, f.file_type, f.content, f.version, f.author_saved, f.deleted, f.visibility, f.draft_of, f.created_at, f.updated_at';
const VERSION_COLUMNS = 'id, file_id, version, content, source, run_id, partial_reason, created_at';

export function toFile(row: FileRow): ProjectFile {
  return {
    id: row.id,
    projectId: row.project_id,
    folder: row.folder,
    title: row.title,
    fileType: row.file_type,
    content: row.content,
    version: row.version,
    authorSaved: row.author_saved,
    deleted: row.deleted,
    visibility: row.visibility,
    draftOf: row.draft_of,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

export function toFileVersion(row: FileVersionRow): FileVersion {
  return {
    id: row.id,
    fileId: row.file_id,
    version: row.version,
    content: row.content,
    source: row.source,
    runId: row.run_id,
    partialReason: row.partial_reason,
    createdAt: row.created_at,
  };
}

export class FileNotFoundError extends Error {
  readonly fileId: string;
  constructor(fileId: string) {
    super(`file ${fileId} does not exist or is deleted`);
    this.name = new.target.name;
    this.fileId = fileId;
  }
}

/**
 * A file created empty is version 0 with no history; one created with content is version 1 and
 * that content is its first version row, so every version >= 1 can be reverted to.
 */
export async function createFile(
  db: Queryable,
  input: {
    projectId: string;
    title: string;
    fileType: string;
    folder?: string;
    content?: string;
    source?: VersionSource;
    runId?: string | null;
    /** An id named before the file exists (the history archive's, docs/decisions/0022). */
    id?: string;
    /** Idempotency key of the first version row (see ai-writes.ts). */
    writeKey?: string;
  },
): Promise<ProjectFile> {
  const content = input.content ?? '';
  const source = input.source ?? 'author';
  const { rows } = await db.query<FileRow>(
    `WITH f AS (
       INSERT INTO files (id, project_id, title, file_type, folder, content, version, author_saved)
       VALUES (COALESCE($8::uuid, gen_random_uuid()), $1, $2, $3, $4, $5,
               CASE WHEN $5 = '' THEN 0 ELSE 1 END, $5 <> '' AND $6 = 'author')
       RETURNING *
     ), history AS (
       INSERT INTO file_versions (file_id, version, content, source, run_id, write_key)
       SELECT id, version, content, $6::text, $7::uuid, $9 FROM f WHERE version = 1
     )
     SELECT ${FILE_COLUMNS} FROM f`,
    [
      input.projectId,
      input.title,
      input.fileType,
      input.folder ?? '',
      content,
      source,
      input.runId ?? null,
      input.id ?? null,
      input.writeKey ?? null,
    ],
  );
  return toFile(rows[0]!);
}

/** A live (not deleted) file of the project, or null. */
export async function getFile(db: Queryable, projectId: string, fileId: string): Promise<ProjectFile | null> {
  if (!isUuid(projectId) || !isUuid(fileId)) return null;
  const { rows } = await db.query<FileRow>(
    `SELECT ${FILE_COLUMNS} FROM files f WHERE f.project_id = $1 AND f.id = $2 AND NOT f.deleted`,
    [projectId, fileId],
  );
  return rows[0] ? toFile(rows[0]) : null;
}

/** Live files of the project, by folder then title. */
export async function listFiles(db: Queryable, projectId: string): Promise<ProjectFile[]> {
  if (!isUuid(projectId)) return [];
  const { rows } = await db.query<FileRow>(
    `SELECT ${FILE_COLUMNS} FROM files f WHERE f.project_id = $1 AND NOT f.deleted
     ORDER BY f.folder, f.title, f.created_at`,
    [projectId],
  );
  return rows.map(toFile);
}

/**
 * Replaces a file's content, bumps its version and records the version row, all in one
 * statement (so atomic on a pool or inside a caller's transaction). Returns the new version.
 */
export async function saveFileContent(
  db: Queryable,
  input: {
    fileId: string;
    content: string;
    source: VersionSource;
    runId?: string | null;
    projectId?: string;
    /** Idempotency key of an AI write (see ai-writes.ts). */
    writeKey?: string;
  },
): Promise<number> {
  if (!isUuid(input.fileId) || (input.projectId !== undefined && !isUuid(input.projectId))) {
    throw new FileNotFoundError(input.fileId);
  }
  const { rows } = await db.query<{ version: number }>(
    `WITH f AS (
       UPDATE files SET content = $2, version = version + 1, updated_at = now(),
         author_saved = author_saved OR $3 = 'author'
       WHERE id = $1 AND NOT deleted AND ($5::uuid IS NULL OR project_id = $5)
       RETURNING id, version, content
     )
     INSERT INTO file_versions (file_id, version, content, source, run_id, write_key)
     SELECT id, version, content, $3::text, $4::uuid, $6 FROM f
     RETURNING version`,
    [
      input.fileId,
      input.content,
      input.source,
      input.runId ?? null,
      input.projectId ?? null,
      input.writeKey ?? null,
    ],
  );
  if (!rows[0]) throw new FileNotFoundError(input.fileId);
  return rows[0].version;
}

/** Version history, newest first. */
export async function listFileVersions(db: Queryable, fileId: string): Promise<FileVersion[]> {
  if (!isUuid(fileId)) return [];
  const { rows } = await db.query<FileVersionRow>(
    `SELECT ${VERSION_COLUMNS} FROM file_versions
     WHERE file_id = $1 ORDER BY version DESC`,
    [fileId],
  );
  return rows.map(toFileVersion);
}

export async function getFileVersion(
  db: Queryable,
  fileId: string,
  version: number,
): Promise<FileVersion | null> {
  if (!isUuid(fileId)) return null;
  const { rows } = await db.query<FileVersionRow>(
    `SELECT ${VERSION_COLUMNS} FROM file_versions
     WHERE file_id = $1 AND version = $2`,
    [fileId, version],
  );
  return rows[0] ? toFileVersion(rows[0]) : null;
}

/** Soft delete: the row and its history stay for snapshots and audits. */
export async function softDeleteFile(db: Queryable, projectId: string, fileId: string): Promise<boolean> {
  if (!isUuid(projectId) || !isUuid(fileId)) return false;
  const { rowCount } = await db.query(
    'UPDATE files SET deleted = true, updated_at = now() WHERE project_id = $1 AND id = $2 AND NOT deleted',
    [projectId, fileId],
  );
  return rowCount === 1;
}
