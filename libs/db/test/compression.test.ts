import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testUrls } from '../../../test/support/urls.ts';
import { insertContextTrace } from '../src/context/index.ts';
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

describe('compression of stored prompts', () => {
  it('is lz4 for the prompts, pglz for what is kept for good', async () => {
    const { rows } = await database.pool.query<{ column: string; method: string }>(
      `SELECT c.relname || '.' || a.attname AS column, a.attcompression AS method
       FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
       WHERE (c.relname, a.attname) IN (('context_traces', 'messages'), ('context_traces', 'trace'),
         ('files', 'content'), ('file_versions', 'content'), ('messages', 'content'))`,
    );
    const methods = Object.fromEntries(rows.map((row) => [row.column, row.method]));
    expect(methods).toEqual({
      'context_traces.messages': lz4 ? 'l' : '',
      // '' is the server's default_toast_compression, pglz unless an operator changed it.
      'context_traces.trace': '',
      'files.content': '',
      'file_versions.content': '',
      'messages.content': '',
    });
  });

  it('stores a prompt compressed that way and reads it back exactly', async () => {
    const messages = [{ role: 'user', content: '林晚在钟楼下听见铜铃，雨一直没有停。'.repeat(1_000) }];
    const runId = randomUUID();
    await insertContextTrace(database.pool, { runId, role: 'writer', step: 0, trace: {}, messages });
    const { rows } = await database.pool.query<{ messages: unknown; method: string | null }>(
      'SELECT messages, pg_column_compression(messages) AS method FROM context_traces WHERE run_id = $1',
      [runId],
    );
    expect(rows[0]!.messages).toEqual(messages);
    expect(rows[0]!.method).toBe(lz4 ? 'lz4' : 'pglz');
  });
});
