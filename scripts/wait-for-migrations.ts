// The apps' init container (deploy/k8s): waits until every migration this image ships is applied
// by the release's migration Job, so no service starts against an older schema. Exits 0 then; it
// never exits on a database that is not up yet (README "Fault tolerance").
import { retryWithBackoff } from '@quill/bus';
import { loadConfig, maskValue } from '@quill/config';
import { createPool, readMigrations } from '@quill/db';

const config = loadConfig();
const target = maskValue('DATABASE_URL', config.DATABASE_URL);
const shipped = (await readMigrations()).map((migration) => migration.name);
const pool = createPool(config.DATABASE_URL, { max: 1, applicationName: 'quill-wait-for-migrations' });
const logger = {
  warn: (fields: object, message: string) =>
    console.log(JSON.stringify({ level: 'warn', ...fields, msg: message })),
};

class MigrationsPending extends Error {}

try {
  await retryWithBackoff(
    async () => {
      const { rows } = await pool.query<{ name: string }>('SELECT name FROM schema_migrations');
      const applied = new Set(rows.map((row) => row.name));
      const missing = shipped.filter((name) => !applied.has(name));
      if (missing.length > 0) throw new MigrationsPending(`waiting for migrations: ${missing.join(', ')}`);
    },
    // Every failure is waited out: the table may not exist yet, or the Job may still be running.
    { what: `the schema of this release on ${target}`, logger, retryable: () => true },
  );
  console.log(`${target}: all ${shipped.length} migrations applied`);
} finally {
  await pool.end();
}
