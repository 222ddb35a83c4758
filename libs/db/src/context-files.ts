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

/** Current content of the given live files of the project, by id. */
export async function getFileContents(
  db: Queryable,
  projectId: string,
  fileIds: readonly string[],
): Promise<Map<string, string>> {
  const ids = [...new Set(fileIds)].filter(isUuid);
  if (!isUuid(projectId) || ids.length === 0) return new Map();
  const { rows } = await db.query<{ id: string; content: string }>(
    'SELECT id, content FROM files WHERE project_id = $1 AND id = ANY($2::uuid[]) AND NOT deleted',
    [projectId, ids],
  );
  return new Map(rows.map((row) => [row.id, row.content]));
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

export interface FileSearchHit {
  id: string;
  /** Distinct query terms found in the content or title. */
  hits: number;
  /** pg_trgm similarity of the title to the query. */
  titleSimilarity: number;
  content: string;
}

/**
 * Project full-text retrieval that works for Chinese: no word segmentation, so the query is cut
 * into short terms (bigrams for CJK runs, words otherwise) and each is matched as a substring,
 * and titles are ranked with pg_trgm similarity. Only `fileIds` (what the role may see) are
 * searched, every file for every term (a two-character term has no trigram for the GIN indexes).
 * A term with a Latin letter is matched without case (ILIKE); any other (CJK, digits) has no case
 * to fold and is found with `strpos`, which finds what `LIKE '%term%'` does for 30–45 % less:
 * a 200-file novel searched for one author request took ~13–45 ms with LIKE, ~9–20 with
 * `strpos` (`test/load/project-search.ts`, docs/decisions/0060). The terms are counted in one
 * subquery with a FROM, so the planner computes the count once per file, not once per reference.
 */
export async function searchFiles(
  db: Queryable,
  input: {
    projectId: string;
    fileIds: readonly string[];
    terms: readonly string[];
    query: string;
    limit: number;
  },
): Promise<FileSearchHit[]> {
  const ids = input.fileIds.filter(isUuid);
  if (!isUuid(input.projectId) || ids.length === 0 || input.terms.length === 0) return [];
  const withCase = input.terms.filter((term) => /[A-Za-z]/.test(term));
  const patterns = withCase.map((term) => `%${term.replace(/[\\%_]/g, (match) => `\\${match}`)}%`);
  const caseless = input.terms.filter((term) => !/[A-Za-z]/.test(term));
  const { rows } = await db.query<{ id: string; hits: number; title_similarity: number; content: string }>(
    `SELECT f.id, hits.count::int AS hits, similarity(f.title, $4) AS title_similarity, f.content
     FROM files f
     CROSS JOIN LATERAL (
       SELECT count(*) AS count FROM (
         SELECT FROM unnest($3::text[]) AS pattern WHERE f.content ILIKE pattern OR f.title ILIKE pattern
         UNION ALL
         SELECT FROM unnest($6::text[]) AS term WHERE strpos(f.content, term) > 0 OR strpos(f.title, term) > 0
       ) found
     ) hits
     WHERE f.project_id = $1 AND f.id = ANY($2::uuid[]) AND NOT f.deleted AND hits.count > 0
     ORDER BY hits.count DESC, title_similarity DESC, f.updated_at DESC
     LIMIT $5`,
    [input.projectId, ids, patterns, input.query, input.limit, caseless],
  );
  return rows.map((row) => ({
    id: row.id,
    hits: row.hits,
    titleSimilarity: Number(row.title_similarity),
    content: row.content,
  }));
}
