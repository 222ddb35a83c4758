import { isUuid } from '../ids.ts';
import type { Queryable } from '../pool.ts';
import { recordAiArtifact } from '../shared-tables/artifacts.ts';
import { FILE_COLUMNS, type FileRow, type ProjectFile, toFile } from '../shared-tables/files.ts';

/**
 * How an AI body reaches the project without ever replacing text it did not see
 * (docs/ai-writes.md): compare-and-set against the version the step last saw, and a draft file
 * next to the original whenever the body cannot go into it.
 */

/** Why a body went to a draft instead of into its file. */
export type DraftReason = 'author_saved' | 'file_changed' | 'file_deleted' | 'partial_over_text';

export type AiBodySave =
  | { kind: 'saved'; fileId: string; title: string; fileType: string; version: number; replayed: boolean }
  | {
      kind: 'drafted';
      fileId: string;
      title: string;
      fileType: string;
      version: number;
      draftOf: { fileId: string; title: string };
      reason: DraftReason;
      replayed: boolean;
    };

export interface AiBodyInput {
  projectId: string;
  fileId: string;
  /** The version the step last saw: the one create_file made or reused, or the one it read. */
  baseVersion: number;
  content: string;
  runId: string;
  /** Idempotency key: the same key never makes a second version (retries, redelivered steps). */
  writeKey: string;
  /** Set for an incomplete body (stopped, cut off); it never replaces text, only fills an empty file. */
  partialReason?: string | null;
}

/** Suffix of a draft's title; a second draft of the same file gets a number. */
export const DRAFT_SUFFIX = '（AI 草稿）';

export function draftTitle(title: string, taken: ReadonlySet<string>): string {
  const first = `${title}${DRAFT_SUFFIX}`;
  if (!taken.has(first)) return first;
  for (let n = 2; ; n++) {
    const numbered = `${title}（AI 草稿 ${n}）`;
    if (!taken.has(numbered)) return numbered;
  }
}

/**
 * Saves an AI body. Run inside the run's write fence: the file row is locked until commit, so an
 * author's save either lands before (and the body becomes a draft) or waits until after.
 */
export async function saveAiBody(db: Queryable, input: AiBodyInput): Promise<AiBodySave> {
  // Locked first: a concurrent save with the same key waits here, then finds the other's row.
  const target = await lockAnyFile(db, input.projectId, input.fileId);
  const replay = await findAiWrite(db, input.writeKey);
  if (replay) return replay;
  const partial = input.partialReason ?? null;
  let reason: DraftReason | undefined;
  if (!target || target.deleted) reason = 'file_deleted';
  else if (target.version !== input.baseVersion) {
    reason = (await authorSavedAfter(db, target.id, input.baseVersion)) ? 'author_saved' : 'file_changed';
  } else if (partial !== null && target.content !== '') reason = 'partial_over_text';

  if (reason === undefined && target) {
    const { rows } = await db.query<{ version: number }>(
      `WITH f AS (
         UPDATE files SET content = $2, version = version + 1, updated_at = now()
         WHERE id = $1 RETURNING id, version, content
       )
       INSERT INTO file_versions (file_id, version, content, source, run_id, write_key, partial_reason)
       SELECT id, version, content, 'ai', $3::uuid, $4, $5 FROM f
       RETURNING version`,
      [target.id, input.content, input.runId, input.writeKey, partial],
    );
    // The body is an artifact version: the fact once accepted (docs/kernel.md).
    await recordAiArtifact(db, {
      projectId: input.projectId,
      runId: input.runId,
      writeKey: input.writeKey,
      fileId: target.id,
      textFileId: target.id,
      placement: 'in_file',
      version: rows[0]!.version,
      baseVersion: target.version,
    });
    return {
      kind: 'saved',
      fileId: target.id,
      title: target.title,
      fileType: target.fileType,
      version: rows[0]!.version,
      replayed: false,
    };
  }
  const original = target ?? { id: input.fileId, title: '', folder: '', fileType: 'draft' };
  const taken = await liveTitlesLike(db, input.projectId, original.folder, original.title);
  const title = draftTitle(original.title || '无题', taken);
  const { rows } = await db.query<{ id: string }>(
    `WITH f AS (
       INSERT INTO files (project_id, title, file_type, folder, content, version, author_saved, draft_of)
       VALUES ($1, $2, $3, $4, $5, 1, false, $6) RETURNING id, version, content
     )
     INSERT INTO file_versions (file_id, version, content, source, run_id, write_key, partial_reason)
     SELECT id, version, content, 'ai', $7::uuid, $8, $9 FROM f
     RETURNING file_id AS id`,
    [
      input.projectId,
      title,
      original.fileType,
      original.folder,
      input.content,
      target ? target.id : null,
      input.runId,
      input.writeKey,
      partial,
    ],
  );
  // A draft is an artifact whose text sits next to its file, waiting for the author.
  await recordAiArtifact(db, {
    projectId: input.projectId,
    runId: input.runId,
    writeKey: input.writeKey,
    fileId: target ? target.id : null,
    textFileId: rows[0]!.id,
    placement: 'draft',
    version: 1,
    baseVersion: null,
  });
  return {
    kind: 'drafted',
    fileId: rows[0]!.id,
    title,
    fileType: original.fileType,
    version: 1,
    draftOf: { fileId: original.id, title: original.title },
    reason: reason ?? 'file_deleted',
    replayed: false,
  };
}

/** The write a key already made, if any (a retry after an unknown commit, a redone step). */
export async function findAiWrite(db: Queryable, writeKey: string): Promise<AiBodySave | null> {
  const { rows } = await db.query<{
    file_id: string;
    version: number;
    title: string;
    file_type: string;
    draft_of: string | null;
    draft_of_title: string | null;
  }>(
    `SELECT v.file_id, v.version, f.title, f.file_type, f.draft_of, d.title AS draft_of_title
     FROM file_versions v JOIN files f ON f.id = v.file_id LEFT JOIN files d ON d.id = f.draft_of
     WHERE v.write_key = $1`,
    [writeKey],
  );
  const row = rows[0];
  if (!row) return null;
  const common = { fileId: row.file_id, title: row.title, fileType: row.file_type, version: row.version };
  if (row.draft_of !== null && row.version === 1) {
    return {
      kind: 'drafted',
      ...common,
      draftOf: { fileId: row.draft_of, title: row.draft_of_title ?? '' },
      reason: 'file_changed',
      replayed: true,
    };
  }
  return { kind: 'saved', ...common, replayed: true };
}

/** The file row even when soft-deleted, locked until the transaction ends. */
async function lockAnyFile(db: Queryable, projectId: string, fileId: string): Promise<ProjectFile | null> {
  if (!isUuid(projectId) || !isUuid(fileId)) return null;
  const { rows } = await db.query<FileRow>(
    `SELECT ${FILE_COLUMNS} FROM files f WHERE f.project_id = $1 AND f.id = $2 FOR UPDATE`,
    [projectId, fileId],
  );
  return rows[0] ? toFile(rows[0]) : null;
}

async function authorSavedAfter(db: Queryable, fileId: string, version: number): Promise<boolean> {
  const { rows } = await db.query(
    `SELECT 1 FROM file_versions WHERE file_id = $1 AND source = 'author' AND version > $2 LIMIT 1`,
    [fileId, version],
  );
  return rows.length > 0;
}

async function liveTitlesLike(
  db: Queryable,
  projectId: string,
  folder: string,
  title: string,
): Promise<Set<string>> {
  const { rows } = await db.query<{ title: string }>(
    `SELECT title FROM files WHERE project_id = $1 AND folder = $2 AND NOT deleted AND starts_with(title, $3)`,
    [projectId, folder, title],
  );
  return new Set(rows.map((row) => row.title));
}
