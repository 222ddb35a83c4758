import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { PG_ERROR, pgErrorCode } from './pool.ts';

export const MIGRATIONS_DIR = fileURLToPath(new URL('../migrations/', import.meta.url));

const MIGRATION_FILE = /^\d{4}_[a-z0-9_]+\.sql$/;
// Any constant works as long as every migrator uses the same one; this spells "quilldb".
const MIGRATION_LOCK_KEY = '7105524163712098';

export interface MigrateOptions {
  log?: (line: string) => void;
  directory?: string;
}

export interface MigrationFile {
  name: string;
  sql: string;
  checksum: string;
}

export async function readMigrations(directory: string = MIGRATIONS_DIR): Promise<MigrationFile[]> {
  const names = (await readdir(directory)).filter((name) => MIGRATION_FILE.test(name)).sort();
  return Promise.all(
    names.map(async (name) => {
      const sql = await readFile(`${directory}/${name}`, 'utf8');
      return { name, sql, checksum: createHash('sha256').update(sql).digest('hex') };
    }),
  );
}

/**
 * Applies pending migrations in lexical order, each in its own transaction, and returns the names
 * applied. A session-level advisory lock serialises concurrent migrators (several replicas
 * starting at once); the ones that wait then find nothing left to do.
 */
export async function migrate(pool: pg.Pool, options: MigrateOptions = {}): Promise<string[]> {
  const log = options.log ?? (() => {});
  const migrations = await readMigrations(options.directory);
  const client = await pool.connect();
  let brokenBy: Error | undefined;
  try {
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
    try {
      return await applyPending(client, migrations, log);
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]);
    }
  } catch (error) {
    // The session may still hold the lock or an aborted transaction: never return it to the pool.
    brokenBy = error instanceof Error ? error : new Error(String(error));
    throw error;
  } finally {
    client.release(brokenBy);
  }
}

async function applyPending(
  client: pg.PoolClient,
  migrations: MigrationFile[],
  log: (line: string) => void,
): Promise<string[]> {
  await client.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
    name text PRIMARY KEY,
    checksum text NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now()
  )`);
  const { rows } = await client.query<{ name: string; checksum: string }>(
    'SELECT name, checksum FROM schema_migrations',
  );
  const applied = new Map(rows.map((row) => [row.name, row.checksum]));
  const done: string[] = [];
  for (const migration of migrations) {
    const previous = applied.get(migration.name);
    if (previous !== undefined) {
      if (previous !== migration.checksum) log(`warning: ${migration.name} changed after it was applied`);
      continue;
    }
    await client.query('BEGIN');
    try {
      await client.query(migration.sql);
      await client.query('INSERT INTO schema_migrations (name, checksum) VALUES ($1, $2)', [
        migration.name,
        migration.checksum,
      ]);
      await client.query('COMMIT');
    } catch (error) {
      await client.query('ROLLBACK');
      throw new MigrationError(migration.name, error);
    }
    log(`applied ${migration.name}`);
    done.push(migration.name);
  }
  return done;
}

export class MigrationError extends Error {
  readonly migration: string;
  constructor(migration: string, cause: unknown) {
    super(`migration ${migration} failed: ${cause instanceof Error ? cause.message : String(cause)}`, {
      cause,
    });
    this.name = new.target.name;
    this.migration = migration;
  }
}

/**
 * Creates the database named in databaseUrl when it does not exist, connecting to the `postgres`
 * database of the same server. Safe to race: a concurrent creator's duplicate is not an error.
 * Returns whether this call created it.
 */
export async function ensureDatabase(databaseUrl: string): Promise<boolean> {
  const name = databaseName(databaseUrl);
  const client = new pg.Client({ connectionString: adminUrl(databaseUrl) });
  await client.connect();
  try {
    const existing = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (existing.rowCount) return false;
    await client.query(`CREATE DATABASE ${pg.escapeIdentifier(name)}`);
    return true;
  } catch (error) {
    // 42P04 when the other creator committed first; 23505 when both raced inside the catalog.
    const code = pgErrorCode(error);
    if (code === PG_ERROR.duplicateDatabase || code === PG_ERROR.uniqueViolation) return false;
    throw error;
  } finally {
    await client.end();
  }
}

/** Drops a database (tests); terminates its remaining connections first. */
export async function dropDatabase(databaseUrl: string): Promise<void> {
  const name = databaseName(databaseUrl);
  const client = new pg.Client({ connectionString: adminUrl(databaseUrl) });
  await client.connect();
  try {
    await client.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(name)} WITH (FORCE)`);
  } finally {
    await client.end();
  }
}

export function databaseName(databaseUrl: string): string {
  const name = decodeURIComponent(new URL(databaseUrl).pathname.replace(/^\//, ''));
  if (!name) throw new Error('the database URL names no database');
  return name;
}

/** The same server and credentials, connected to the always-present `postgres` database. */
export function adminUrl(databaseUrl: string): string {
  const url = new URL(databaseUrl);
  url.pathname = '/postgres';
  return url.toString();
}
