import type pg from 'pg';

/**
 * One pass at a time across replicas: runs `pass` while a connection of its own holds the session
 * advisory lock `key`, and answers false (without running it) while another replica holds it.
 * Used by the router's sweep and billing's reconciler (docs/architecture.md).
 */
export async function withAdvisoryLockPass(
  pool: pg.Pool,
  key: string,
  pass: () => Promise<void>,
): Promise<boolean> {
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    const locked = await client.query<{ locked: boolean }>(
      'SELECT pg_try_advisory_lock(hashtext($1)) AS locked',
      [key],
    );
    if (!locked.rows[0]?.locked) return false;
    try {
      await pass();
    } finally {
      await client.query('SELECT pg_advisory_unlock(hashtext($1))', [key]).catch((error) => {
        // A connection that could not unlock still holds the lock: it must not go back to the pool.
        broken = error instanceof Error ? error : new Error(String(error));
      });
    }
    return true;
  } finally {
    client.release(broken);
  }
}
