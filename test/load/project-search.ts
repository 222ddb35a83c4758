/**
 * What the context compiler's retrieval search costs PostgreSQL in a real project: the 200-file
 * novel of the context benchmark (120 chapters, characters, settings, outlines; ~380k characters),
 * searched over every file for the terms of each of its author's requests, as a compile does
 * (`searchFiles`, `libs/db/src/context-files.ts`; the terms are the compiler's own `queryTerms`).
 * Next to it, a read of every file's content alone: what a search made outside PostgreSQL would
 * pay to get the text. Prints a table and one JSON line.
 *
 *   node test/load/project-search.ts [--rounds 30]
 */
import { parseArgs } from 'node:util';
import { searchFiles } from '@quill/db';
import { createTestDatabase } from '@quill/db/testing';
import { queryTerms } from '../../services/context/src/query-terms.ts';
import { AUTHOR_REQUESTS, seedNovelist } from '../support/chinese-project.ts';
import { loadAverage } from './support/proc.ts';
import { distribution, rounded, table } from './support/stats.ts';

const { values } = parseArgs({ options: { rounds: { type: 'string', default: '30' } } });
const rounds = Number(values.rounds);

const database = await createTestDatabase();
try {
  const { project } = await seedNovelist(database.pool);
  const { rows } = await database.pool.query<{ id: string; chars: number }>(
    'SELECT id, length(content) AS chars FROM files WHERE project_id = $1 AND NOT deleted',
    [project.projectId],
  );
  const fileIds = rows.map((row) => row.id);
  const characters = rows.reduce((sum, row) => sum + Number(row.chars), 0);
  const timed = async (work: () => Promise<unknown>) => {
    const times: number[] = [];
    for (let round = 0; round < rounds; round++) {
      const started = performance.now();
      await work();
      times.push(performance.now() - started);
    }
    return distribution(times);
  };
  const results = [];
  for (const request of AUTHOR_REQUESTS) {
    const terms = queryTerms(request);
    let hits = 0;
    const times = await timed(async () => {
      hits = (
        await searchFiles(database.pool, {
          projectId: project.projectId,
          fileIds,
          terms,
          query: request,
          limit: 20,
        })
      ).length;
    });
    results.push({
      request,
      terms: terms.length,
      hits,
      p50_ms: rounded(times.p50),
      p95_ms: rounded(times.p95),
    });
  }
  const readAll = await timed(() =>
    database.pool.query('SELECT id, content FROM files WHERE project_id = $1 AND id = ANY($2::uuid[])', [
      project.projectId,
      fileIds,
    ]),
  );
  const load = loadAverage();
  console.log(
    `project search: ${fileIds.length} files, ${characters} characters, ${rounds} rounds per request (load ${load})`,
  );
  console.log(
    table([
      ['request', 'terms', 'hits', 'p50 ms', 'p95 ms'],
      ...results.map((row) => [
        row.request,
        String(row.terms),
        String(row.hits),
        String(row.p50_ms),
        String(row.p95_ms),
      ]),
      [
        '(every file read, no search)',
        '',
        String(fileIds.length),
        String(rounded(readAll.p50)),
        String(rounded(readAll.p95)),
      ],
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
      read_all_p50_ms: rounded(readAll.p50),
    }),
  );
} finally {
  await database.drop();
}
