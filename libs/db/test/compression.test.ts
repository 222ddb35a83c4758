import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testUrls } from '../../../test/support/urls.ts';
import { createFile, createProject, createUser } from '../src/gateway/index.ts';
import { createTestDatabase, type TestDatabase } from '../src/testing.ts';

let database: TestDatabase;
// The servers this runs on (Debian's PostgreSQL 15, the shipped image) are built with lz4; the
// migration leaves pglz on one that is not, and so do these checks.
let lz4 = false;

beforeAll(async () => {
  database = await createTestDatabase({ serverUrl: testUrls.database });
  lz4 = await database.pool
    .query('CREATE TEMP TABLE lz4_probe (value text COMPRESSION lz4)')
    .then(() => true)
    .catch(() => false);
});
afterAll(async () => {
  await database.drop();
});

const LARGE_VALUES = [
  ['context_traces', 'messages'],
  ['context_traces', 'trace'],
  ['run_turn_contexts', 'turn'],
  ['files', 'content'],
  ['file_versions', 'content'],
  ['messages', 'content'],
] as const;

describe('compression of large values', () => {
  it('is lz4 for the columns that hold prompts, traces and texts, when the server has lz4', async () => {
    const { rows } = await database.pool.query<{ table: string; column: string; method: string }>(
      `SELECT c.relname AS table, a.attname AS column, a.attcompression AS method
       FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
       WHERE c.relname = ANY($1) AND a.attname = ANY($2) AND a.attnum > 0`,
      [LARGE_VALUES.map(([table]) => table), LARGE_VALUES.map(([, column]) => column)],
    );
    const methods = Object.fromEntries(rows.map((row) => [`${row.table}.${row.column}`, row.method]));
    for (const [table, column] of LARGE_VALUES) {
      expect(methods[`${table}.${column}`], `${table}.${column}`).toBe(lz4 ? 'l' : '');
    }
  });

  it('stores a large text compressed that way and reads it back exactly', async () => {
    const user = await createUser(database.pool, { email: 'lz4@example.com', displayName: 'lz4' });
    const projectId = (await createProject(database.pool, { ownerId: user.id, title: 'lz4' })).id;
    const content = '林晚在钟楼下听见铜铃，雨一直没有停。'.repeat(1_000);
    const file = await createFile(database.pool, { projectId, title: '第一章', fileType: 'draft', content });
    const { rows } = await database.pool.query<{ content: string; method: string | null }>(
      'SELECT content, pg_column_compression(content) AS method FROM files WHERE id = $1',
      [file.id],
    );
    expect(rows[0]!.content).toBe(content);
    expect(rows[0]!.method).toBe(lz4 ? 'lz4' : 'pglz');
  });
});
