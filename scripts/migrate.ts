// `npm run migrate`: creates the database named by DATABASE_URL when missing, then applies every
// pending migration. Safe to run from several replicas at once (advisory lock in migrate()).
import { loadConfig, maskValue } from '@quill/config';
import { createPool, ensureDatabase, migrate } from '@quill/db';

const config = loadConfig();
const target = maskValue('DATABASE_URL', config.DATABASE_URL);
if (await ensureDatabase(config.DATABASE_URL)) console.log(`created database ${target}`);
const pool = createPool(config.DATABASE_URL, { max: 1, applicationName: 'quill-migrate' });
try {
  const applied = await migrate(pool, { log: (line) => console.log(line) });
  console.log(
    applied.length ? `${applied.length} migration(s) applied to ${target}` : `${target} is up to date`,
  );
} finally {
  await pool.end();
}
