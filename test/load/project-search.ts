/**
 * What the context compiler's retrieval search costs in a real project: the 200-file novel of the
 * context benchmark (120 chapters, characters, settings, outlines; ~380k characters), searched
 * over every file for the terms of each of its author's requests, as a compile does (the terms are
 * the compiler's own `queryTerms`). Three ways, each timed with the CPU it took this process and
 * the machine's PostgreSQL per search (docs/decisions/0060, 0061):
 *   - sql: the statement PostgreSQL ran before the search moved (test/support/sql-file-search.ts);
 *   - cached: the context service's search (project-texts.ts) with this replica's text cache warm,
 *     as every compile after a project's first on a replica finds it;
 *   - uncached: the same with no cache (`CONTEXT_TEXT_CACHE_MB=0`), every text read each time.
 * Prints a table and one JSON line.
 *
 *   node test/load/project-search.ts [--rounds 30]
 */
import { parseArgs } from 'node:util';
import { createTestDatabase } from '@quill/db/testing';
import { createProjectTexts, type ProjectTexts } from '../../services/context/src/project-texts.ts';
import { queryTerms } from '../../services/context/src/query-terms.ts';
import { createTextCache } from '../../services/context/src/text-cache.ts';
import { AUTHOR_REQUESTS, seedNovelist } from '../support/chinese-project.ts';
import { listedFiles, searchFilesInSql } from '../support/sql-file-search.ts';
import { loadAverage, namedProcessesCpuMs } from './support/proc.ts';
import { distribution, rounded, table } from './support/stats.ts';

const { values } = parseArgs({ options: { rounds: { type: 'string', default: '30' } } });
const rounds = Number(values.rounds);
const LIMIT = 20;

const database = await createTestDatabase();
try {
  const { project } = await seedNovelist(database.pool);
  const listed = await listedFiles(database.pool, project.projectId);
  const files = [...listed.values()];
  const fileIds = files.map((file) => file.id);
  const characters = files.reduce((sum, file) => sum + file.chars, 0);
  // The compile's own search over every listed file, through a replica's texts.
  const inProcess = (texts: ProjectTexts) => async (terms: string[], query: string) =>
    (
      await texts.search({
        projectId: project.projectId,
        listed,
        parts: [{ files, limit: LIMIT }],
        terms,
        query,
      })
    )[0]!;

  const ways = {
    sql: (terms: string[], query: string) =>
      searchFilesInSql(database.pool, { projectId: project.projectId, fileIds, terms, query, limit: LIMIT }),
    cached: inProcess(createProjectTexts(database.pool)),
    uncached: inProcess(createProjectTexts(database.pool, createTextCache(0))),
  };
  type Way = keyof typeof ways;
  // One search of each way first: the cache fills, and every way's statements are prepared.
  for (const request of AUTHOR_REQUESTS)
    for (const way of Object.values(ways)) await way(queryTerms(request), request);

  const results = [];
  for (const request of AUTHOR_REQUESTS) {
    const terms = queryTerms(request);
    const row: Record<string, unknown> = { request, terms: terms.length };
    const found: Record<string, string> = {};
    for (const name of Object.keys(ways) as Way[]) {
      const times: number[] = [];
      const cpuStart = process.cpuUsage();
      const postgresStart = namedProcessesCpuMs('postgres');
      for (let round = 0; round < rounds; round++) {
        const started = performance.now();
        const hits = await ways[name](terms, request);
        times.push(performance.now() - started);
        found[name] = hits.map((hit) => `${hit.id}:${hit.hits}`).join(',');
      }
      const cpu = process.cpuUsage(cpuStart);
      const times50 = distribution(times);
      row[name] = {
        p50_ms: rounded(times50.p50),
        p95_ms: rounded(times50.p95),
        own_cpu_ms: rounded((cpu.user + cpu.system) / 1000 / rounds),
        postgres_cpu_ms: rounded((namedProcessesCpuMs('postgres') - postgresStart) / rounds),
      };
    }
    // The three ways rank the same files with the same counts, or the comparison means nothing.
    if (found.cached !== found.sql || found.uncached !== found.sql) {
      throw new Error(`the searches disagree for ${request}: ${JSON.stringify(found)}`);
    }
    row.hits = found.sql!.split(',').filter(Boolean).length;
    results.push(row);
  }
  const load = loadAverage();
  console.log(
    `project search: ${fileIds.length} files, ${characters} characters, ${rounds} rounds per request and way (load ${load}); ms per search`,
  );
  const cell = (value: unknown) => {
    const way = value as { p50_ms: number; own_cpu_ms: number; postgres_cpu_ms: number };
    return `${way.p50_ms} (cpu ${way.own_cpu_ms} + pg ${way.postgres_cpu_ms})`;
  };
  console.log(
    table([
      ['request', 'terms', 'hits', 'sql p50', 'cached p50', 'uncached p50'],
      ...results.map((row) => [
        String(row.request),
        String(row.terms),
        String(row.hits),
        cell(row.sql),
        cell(row.cached),
        cell(row.uncached),
      ]),
    ]),
  );
  console.log(
    JSON.stringify({
      bench: 'project-search',
      files: fileIds.length,
      characters,
      rounds,
      load_average: load,
      requests: results,
    }),
  );
} finally {
  await database.drop();
}
