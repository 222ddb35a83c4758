import pg from 'pg';
import { PreparingClient } from './prepared-statements.ts';

/** Anything that can run a query: the pool itself or a client checked out of it. */
export type Queryable = pg.Pool | pg.PoolClient;

export interface PoolOptions {
  max?: number;
  /**
   * Connections kept open however long they idle (the default closes idle ones after 10 s). A
   * run's launch path makes a dozen sequential queries across services; after a quiet spell each
   * would otherwise open its connection first (a few ms each here, more over TLS).
   */
  min?: number;
  /**
   * How long a connection above `min` may idle before it is closed (pg's default is 10 s). An
   * author reads a reply before sending the next message: a launch after such a pause found the
   * connections its parallel reads had used closed, and PostgreSQL forked a backend and each
   * statement was prepared again for every one it reopened (docs/decisions/0051).
   */
  idleTimeoutMs?: number;
  applicationName?: string;
  /** Names parameterised statements so the server plans each once per connection (default true). */
  preparedStatements?: boolean;
  /** Errors of idle clients (server restart, network); without a handler they crash the process. */
  onError?: (error: Error) => void;
}

const TIMESTAMPTZ_OID = 1184;
const INT8_OID = 20;

const TIMESTAMP_PATTERN =
  /^(\d{4}-\d\d-\d\d) (\d\d:\d\d:\d\d)(?:\.(\d{1,6}))?([+-]\d\d)(?::?(\d\d))?(?::?(\d\d))?$/;

/**
 * Postgres prints `2024-05-01 10:00:00.1234+08`; we hand out `2024-05-01T02:00:00.123400Z`, the
 * format of `microsToIso` in @quill/contracts, so that string order is time order and the
 * microseconds a JS Date would drop survive (docs/agent-behaviour.md 坑 8).
 */
export function timestamptzToIso(raw: string): string {
  const match = TIMESTAMP_PATTERN.exec(raw);
  if (!match) return raw; // infinity, BC dates: nothing sensible to convert to
  const [, date, time, fraction = '', hours, minutes = '00', seconds = '00'] = match;
  const utcMillis =
    Date.parse(`${date}T${time}${hours}:${minutes}`) - Number(`${hours![0]}1`) * Number(seconds) * 1000;
  if (Number.isNaN(utcMillis)) return raw;
  return `${new Date(utcMillis).toISOString().slice(0, 19)}.${fraction.padEnd(6, '0')}Z`;
}

/** int8 (count(*), sums) as a number when it fits; beyond 2^53 the exact digits are kept. */
export function int8ToNumber(raw: string): number | string {
  const value = Number(raw);
  return Number.isSafeInteger(value) ? value : raw;
}

function createTypeOverrides(): pg.TypeOverrides {
  // Per-pool overrides rather than pg.types.setTypeParser: no process-wide mutation on import.
  const overrides = new pg.TypeOverrides();
  overrides.setTypeParser(TIMESTAMPTZ_OID, 'text', timestamptzToIso);
  overrides.setTypeParser(INT8_OID, 'text', int8ToNumber);
  return overrides;
}

export function createPool(databaseUrl: string, options: PoolOptions = {}): pg.Pool {
  const pool = new pg.Pool({
    connectionString: databaseUrl,
    max: options.max ?? 10,
    min: Math.min(options.min ?? 0, options.max ?? 10),
    ...(options.idleTimeoutMs === undefined ? {} : { idleTimeoutMillis: options.idleTimeoutMs }),
    application_name: options.applicationName ?? 'quill',
    types: createTypeOverrides(),
    ...(options.preparedStatements === false ? {} : { Client: PreparingClient }),
  });
  // An idle client's error is also raised on the next query that uses the pool, so ignoring
  // it here loses nothing; the default (no listener) would crash the process.
  pool.on('error', options.onError ?? (() => {}));
  return pool;
}

/** Runs fn inside BEGIN/COMMIT on one client; rolls back and rethrows on any error. */
export async function withTransaction<T>(
  pool: pg.Pool,
  fn: (client: pg.PoolClient) => Promise<T>,
): Promise<T> {
  const client = await pool.connect();
  // A client that could not roll back is in an unknown state: destroy it instead of pooling it.
  let brokenBy: Error | undefined;
  try {
    await client.query('BEGIN');
    const result = await fn(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    try {
      await client.query('ROLLBACK');
    } catch (rollbackError) {
      brokenBy = rollbackError instanceof Error ? rollbackError : new Error(String(rollbackError));
    }
    throw error;
  } finally {
    client.release(brokenBy);
  }
}

/** Postgres error codes we branch on. */
export const PG_ERROR = {
  uniqueViolation: '23505',
  duplicateDatabase: '42P04',
  invalidTextRepresentation: '22P02',
} as const;

export function pgErrorCode(error: unknown): string | undefined {
  if (typeof error === 'object' && error !== null && 'code' in error && typeof error.code === 'string') {
    return error.code;
  }
  return undefined;
}
