import { isUuid } from './ids.ts';
import type { Queryable } from './pool.ts';

/**
 * Reads the context compiler makes. Listing is metadata only (no content), so a compile costs
 * one small row per file; contents are fetched only for the files that may be shown.
 */
export interface FileSummary {
  id: string;
  folder: string;
  title: string;
  fileType: string;
  visibility: string;
  chars: number;
  version: number;
  /**
   * Set when the file's current text is an AI artifact the author has not accepted (a draft, or
   * an in-file write under review): the compiler labels it a draft, never the fact.
   */
  unaccepted: UnacceptedState | null;
  createdAt: string;
  updatedAt: string;
}

export type UnacceptedState = 'drafted' | 'under_review' | 'revision_requested';

/** A live file's current text and the version it is. */
export interface FileText {
  version: number;
  content: string;
}

/**
 * Current text of the given live files of the project, by id, each with its version: the context
 * service keeps texts by file and version, and a file's text changes only with its version (every
 * write to `files.content` also moves `version`).
 */
export async function readFileTexts(
  db: Queryable,
  projectId: string,
  fileIds: readonly string[],
): Promise<Map<string, FileText>> {
  const ids = [...new Set(fileIds)].filter(isUuid);
  if (!isUuid(projectId) || ids.length === 0) return new Map();
  const { rows } = await db.query<{ id: string; version: number; content: string }>(
    'SELECT id, version, content FROM files WHERE project_id = $1 AND id = ANY($2::uuid[]) AND NOT deleted',
    [projectId, ids],
  );
  return new Map(rows.map((row) => [row.id, { version: row.version, content: row.content }]));
}

/**
 * pg_trgm's similarity of each title to the query, in the order given. The context service
 * searches file texts itself but leaves this to PostgreSQL, the ranking's authority before the
 * search moved (trigram extraction depends on the server's locale). One statement, no table read.
 */
export async function titleSimilarities(
  db: Queryable,
  titles: readonly string[],
  query: string,
): Promise<number[]> {
  if (titles.length === 0) return [];
  const { rows } = await db.query<{ similarity: number }>(
    `SELECT similarity(title, $2) AS similarity
     FROM unnest($1::text[]) WITH ORDINALITY AS given(title, position) ORDER BY position`,
    [titles, query],
  );
  return rows.map((row) => Number(row.similarity));
}

/** Files this run saved a version of: what the quality reviewer is asked to review. */
export async function listRunWrittenFileIds(db: Queryable, runId: string): Promise<string[]> {
  if (!isUuid(runId)) return [];
  const { rows } = await db.query<{ file_id: string }>(
    'SELECT DISTINCT file_id FROM file_versions WHERE run_id = $1',
    [runId],
  );
  return rows.map((row) => row.file_id);
}
