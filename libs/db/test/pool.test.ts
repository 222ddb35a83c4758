import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testUrls } from '../../../test/support/urls.ts';
import { withTransaction } from '../src/index.ts';
import { createPool, int8ToNumber, timestamptzToIso } from '../src/pool.ts';
import { MAX_PREPARED_PER_CONNECTION, namedQuery, statementName } from '../src/prepared-statements.ts';
import { createTestDatabase, type TestDatabase } from '../src/testing.ts';

// One database for the file: the pool tests and the prepared-statement tests use tables of their own.
let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase({ serverUrl: testUrls.database });
});
afterAll(async () => {
  await database.drop();
});

/** A pool of one connection on the file's database, ended after `use`: every query shares its statements. */
async function withOneConnection(
  use: (pool: ReturnType<typeof createPool>) => Promise<void>,
  options: { preparedStatements?: boolean } = {},
): Promise<void> {
  const pool = createPool(database.url, { max: 1, ...options });
  try {
    await use(pool);
  } finally {
    await pool.end();
  }
}

describe('timestamptz and int8 parsing', () => {
  it('normalises any offset to UTC ISO with six fraction digits', () => {
    expect(timestamptzToIso('2024-05-01 10:00:00.123456+00')).toBe('2024-05-01T10:00:00.123456Z');
    expect(timestamptzToIso('2024-05-01 10:00:00+08')).toBe('2024-05-01T02:00:00.000000Z');
    expect(timestamptzToIso('2024-05-01 01:30:00.5-05:30')).toBe('2024-05-01T07:00:00.500000Z');
    expect(timestamptzToIso('infinity')).toBe('infinity');
  });

  it('keeps int8 exact', () => {
    expect(int8ToNumber('42')).toBe(42);
    expect(int8ToNumber('9223372036854775807')).toBe('9223372036854775807');
  });
});

describe('pool', () => {
  it('returns timestamps with microseconds and counts as numbers', async () => {
    const { rows } = await database.pool.query<{ at: string; total: number }>(
      `SELECT '2024-05-01 10:00:00.123456+02'::timestamptz AS at, count(*) AS total FROM generate_series(1, 3)`,
    );
    expect(rows[0]).toEqual({ at: '2024-05-01T08:00:00.123456Z', total: 3 });
  });

  it('rolls a failed transaction back', async () => {
    await database.pool.query('CREATE TABLE scratch (value int)');
    await expect(
      withTransaction(database.pool, async (client) => {
        await client.query('INSERT INTO scratch VALUES (1)');
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    const { rows } = await database.pool.query('SELECT * FROM scratch');
    expect(rows).toEqual([]);
  });
});

describe('idle connections', () => {
  /** Opens `count` connections at once (each query holds its own until all have started). */
  const openConnections = async (pool: ReturnType<typeof createPool>, count: number) => {
    await Promise.all(Array.from({ length: count }, () => pool.query('SELECT pg_sleep(0.05)')));
  };

  it('keeps connections above the min for the idle timeout it was given, then down to the min', async () => {
    const lasting = createPool(database.url, { max: 3, min: 1, idleTimeoutMs: 300_000 });
    const brief = createPool(database.url, { max: 3, min: 1, idleTimeoutMs: 50 });
    try {
      await Promise.all([openConnections(lasting, 3), openConnections(brief, 3)]);
      expect(lasting.totalCount).toBe(3);
      // The brief pool closes its two extra connections; the lasting one still holds all three then.
      for (let waited = 0; brief.totalCount > 1 && waited < 600; waited++) {
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(brief.totalCount).toBe(1);
      expect(lasting.totalCount).toBe(3);
      expect(lasting.idleCount).toBe(3);
    } finally {
      await Promise.all([lasting.end(), brief.end()]);
    }
  });
});

describe('prepared statements', () => {
  it('names a statement after its operation, first table and text', () => {
    const name = statementName('SELECT phase FROM runs WHERE run_id = $1');
    expect(name).toMatch(/^SELECT runs [\w-]{10}$/);
    expect(statementName('SELECT phase FROM runs WHERE run_id = $1 ')).not.toBe(name);
    expect(statementName('  with k AS (UPDATE api_keys SET x = 1) SELECT 1')).toMatch(/^WITH api_keys /);
    expect(statementName(`SELECT $1::int FROM ${'t'.repeat(80)}`).length).toBeLessThanOrEqual(52);
  });

  it('names parameterised queries only', () => {
    const nameFor = (text: string) => statementName(text);
    const text = 'SELECT $1::int AS value';
    expect(namedQuery(text, [1], nameFor)).toEqual({
      config: { text, name: statementName(text), values: [1] },
      values: undefined,
      text,
    });
    // The object form keeps its other options (row mode, types) next to the name.
    expect(namedQuery({ text, values: [2], rowMode: 'array' }, undefined, nameFor).config).toEqual({
      text,
      values: [2],
      rowMode: 'array',
      name: statementName(text),
    });
    // A callback in the values' place stays where pg looks for it.
    const callback = () => {};
    expect(namedQuery({ text, values: [3] }, callback, nameFor).values).toBe(callback);
    // Simple-protocol queries stay as they are: BEGIN, scripts, an explicit name; and a full connection.
    expect(namedQuery('BEGIN', undefined, nameFor)).toEqual({ config: 'BEGIN', values: undefined });
    expect(namedQuery('SELECT 1; SELECT 2', [], nameFor)).toEqual({
      config: 'SELECT 1; SELECT 2',
      values: [],
    });
    const own = { text, name: 'mine', values: [3] };
    expect(namedQuery(own, undefined, nameFor).config).toBe(own);
    expect(namedQuery(text, [4], () => undefined)).toEqual({ config: text, values: [4] });
  });

  it('prepares a statement once per connection and reuses it, inside and outside transactions', async () => {
    await withOneConnection(async (pool) => {
      const text = 'SELECT $1::int + 1 AS next';
      for (let value = 0; value < 3; value++) {
        const { rows } = await pool.query<{ next: number }>(text, [value]);
        expect(rows).toEqual([{ next: value + 1 }]);
      }
      await withTransaction(pool, async (client) => {
        expect((await client.query(text, [41])).rows).toEqual([{ next: 42 }]);
      });
      const { rows } = await pool.query<{ name: string; statement: string }>(
        'SELECT name, statement FROM pg_prepared_statements WHERE statement = $1 OR name = $2',
        [text, statementName(text)],
      );
      // One connection, one statement for the four calls; the listing query is prepared too.
      expect(rows).toEqual([{ name: statementName(text), statement: text }]);
    });
  });

  it('a statement that fails to parse reports its error and leaves the connection usable', async () => {
    await withOneConnection(async (pool) => {
      const text = 'SELECT $1::int AS value FROM made_later';
      await expect(pool.query(text, [1])).rejects.toMatchObject({ code: '42P01' });
      await pool.query('CREATE TABLE made_later (value int)');
      // The same text, now valid: it is parsed again, not taken for already prepared.
      expect((await pool.query(text, [1])).rows).toEqual([]);
      await pool.query('INSERT INTO made_later VALUES (1)');
      expect((await pool.query(text, [7])).rows).toEqual([{ value: 7 }]);
    });
  });

  it('prepares at most its bound of statements on one connection; the rest go unnamed and still run', async () => {
    await withOneConnection(async (pool) => {
      for (let index = 0; index <= MAX_PREPARED_PER_CONNECTION; index++) {
        const { rows } = await pool.query(`SELECT $1::int + ${index} AS value`, [1]);
        expect(rows).toEqual([{ value: index + 1 }]);
      }
      const { rows } = await pool.query('SELECT count(*) AS prepared FROM pg_prepared_statements');
      expect(rows).toEqual([{ prepared: MAX_PREPARED_PER_CONNECTION }]);
    });
  });

  it('a statement whose columns a migration changed is prepared again: retried outside a transaction, failed inside one', async () => {
    await withOneConnection(async (pool) => {
      await pool.query('CREATE TABLE altered (id int, title text)');
      await pool.query(`INSERT INTO altered VALUES (1, 'one')`);
      const text = 'SELECT * FROM altered WHERE id = $1';
      expect((await pool.query(text, [1])).rows).toEqual([{ id: 1, title: 'one' }]);

      await pool.query('ALTER TABLE altered ADD COLUMN words int');
      expect((await pool.query(text, [1])).rows).toEqual([{ id: 1, title: 'one', words: null }]);

      await pool.query('ALTER TABLE altered ADD COLUMN tag text');
      await expect(
        withTransaction(pool, async (client) => {
          await client.query(text, [1]);
        }),
      ).rejects.toMatchObject({ code: '0A000' });
      // The next transaction prepares it afresh.
      const rows = await withTransaction(pool, async (client) => (await client.query(text, [1])).rows);
      expect(rows).toEqual([{ id: 1, title: 'one', words: null, tag: null }]);
    });
  });

  it('is off when asked: nothing is prepared', async () => {
    await withOneConnection(
      async (pool) => {
        await pool.query('SELECT $1::int AS value', [1]);
        const { rows } = await pool.query('SELECT count(*) AS prepared FROM pg_prepared_statements');
        expect(rows).toEqual([{ prepared: 0 }]);
      },
      { preparedStatements: false },
    );
  });
});
