import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testUrls } from '../../../test/support/urls.ts';
import { withTransaction } from '../src/index.ts';
import { int8ToNumber, timestamptzToIso } from '../src/pool.ts';
import { createTestDatabase, type TestDatabase } from '../src/testing.ts';

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
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase({ serverUrl: testUrls.database });
  });
  afterAll(async () => {
    await database.drop();
  });

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
