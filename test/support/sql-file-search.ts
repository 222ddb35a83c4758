import { randomUUID } from 'node:crypto';
import { isUuid, readCompileBasics } from '@quill/db';
import type { Pool } from 'pg';
import type { FileSearchHit } from '../../services/context/src/file-search.ts';
import type { ListedFile } from '../../services/context/src/project-texts.ts';

/**
 * The retrieval search as PostgreSQL ran it before the context service searched file texts itself
 * (docs/decisions/0060, 0061): every file of `fileIds` scanned for every term, a term with a Latin
 * letter matched without case (ILIKE), any other with `strpos`; hits ranked by distinct terms,
 * then pg_trgm title similarity, then the newest. Kept as the reference the in-process search is
 * checked against (services/context/test/file-search.test.ts) and as the benchmark's "before"
 * (test/load/project-search.ts).
 */
export async function searchFilesInSql(
  db: Pick<Pool, 'query'>,
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

/** A project's live files as a compile lists them (its own first statement), by id. */
export async function listedFiles(pool: Pool, projectId: string): Promise<Map<string, ListedFile>> {
  const { summaries } = await readCompileBasics(pool, {
    projectId,
    sessionId: randomUUID(),
    runId: randomUUID(),
    userId: randomUUID(),
    recentLimit: 1,
    reviewTargets: false,
  });
  return new Map(summaries.map((file) => [file.id, file]));
}
