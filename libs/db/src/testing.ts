import { randomBytes } from 'node:crypto';
import { loadConfig } from '@quill/config';
import type pg from 'pg';
import { dropDatabase, ensureDatabase, migrate } from './migrate.ts';
import { createPool } from './pool.ts';

export interface TestDatabase {
  url: string;
  pool: pg.Pool;
  /** Closes the pool and drops the database. */
  drop(): Promise<void>;
}

/**
 * A fresh, migrated database `quill_test_<random>` on the server of DATABASE_URL, so test files
 * running in parallel never see each other's rows.
 */
export async function createTestDatabase(
  options: { serverUrl?: string; max?: number } = {},
): Promise<TestDatabase> {
  const url = new URL(options.serverUrl ?? loadConfig().DATABASE_URL);
  url.pathname = `/quill_test_${randomBytes(6).toString('hex')}`;
  const databaseUrl = url.toString();
  await ensureDatabase(databaseUrl);
  const pool = createPool(databaseUrl, { max: options.max ?? 5, applicationName: 'quill-test' });
  try {
    await migrate(pool);
  } catch (error) {
    await pool.end();
    await dropDatabase(databaseUrl);
    throw error;
  }
  let dropped = false;
  return {
    url: databaseUrl,
    pool,
    async drop() {
      if (dropped) return;
      dropped = true;
      await pool.end();
      await dropDatabase(databaseUrl);
    },
  };
}
