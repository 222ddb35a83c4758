import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { testUrls } from '../../../test/support/urls.ts';
import { createPool, ensureDatabase, migrate, readMigrations } from '../src/index.ts';
import { dropDatabase } from '../src/migrate.ts';

function scratchUrl(): string {
  const url = new URL(testUrls.database);
  url.pathname = `/quill_test_${randomBytes(6).toString('hex')}`;
  return url.toString();
}

describe('migrate', () => {
  const created: string[] = [];
  afterAll(async () => {
    await Promise.all(created.map((url) => dropDatabase(url)));
  });

  it('creates a missing database once, even when raced', async () => {
    const url = scratchUrl();
    created.push(url);
    const results = await Promise.all([ensureDatabase(url), ensureDatabase(url), ensureDatabase(url)]);
    expect(results.filter(Boolean).length).toBeLessThanOrEqual(1);
    expect(await ensureDatabase(url)).toBe(false);
  });

  it('applies every migration once; concurrent and repeated runs apply nothing more', async () => {
    const url = scratchUrl();
    created.push(url);
    await ensureDatabase(url);
    const first = createPool(url, { max: 2 });
    const second = createPool(url, { max: 2 });
    try {
      const [a, b] = await Promise.all([migrate(first), migrate(second)]);
      const names = (await readMigrations()).map((migration) => migration.name);
      // Exactly one of the racers applied each file; together they applied all of them.
      expect([...a, ...b].sort()).toEqual(names);
      expect(await migrate(first)).toEqual([]);

      const { rows } = await first.query<{ name: string }>(
        'SELECT name FROM schema_migrations ORDER BY name',
      );
      expect(rows.map((row) => row.name)).toEqual(names);
      const tables = await first.query<{ table_name: string }>(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'",
      );
      expect(tables.rows.map((row) => row.table_name)).toEqual(
        expect.arrayContaining(['users', 'files', 'runs', 'settlements', 'usage_records', 'context_traces']),
      );
    } finally {
      await Promise.all([first.end(), second.end()]);
    }
  });

  it('reports applied migrations through the log callback', async () => {
    const url = scratchUrl();
    created.push(url);
    await ensureDatabase(url);
    const pool = createPool(url, { max: 1 });
    try {
      const lines: string[] = [];
      const applied = await migrate(pool, { log: (line) => lines.push(line) });
      expect(lines).toEqual(applied.map((name) => `applied ${name}`));
    } finally {
      await pool.end();
    }
  });
});
