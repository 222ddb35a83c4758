import { createHash } from 'node:crypto';
import pg from 'pg';

/**
 * Distinct statements one connection prepares at most. Every query text here is a constant, so
 * a service prepares a few dozen; the bound keeps a text built at run time (there should be
 * none) from growing the server's memory without end: past it, queries go unnamed as before.
 */
export const MAX_PREPARED_PER_CONNECTION = 256;

/**
 * The statement name of a query text: its operation and first table, so a trace's span
 * (`pg.query:<name>`, the pg instrumentation names spans after prepared statements) still says
 * what ran, and a hash of the text, so names are unique and the same in every process. Short of
 * the server's 63-byte limit, with room for a renamed statement's suffix.
 */
export function statementName(text: string): string {
  const operation = /^\s*([A-Za-z]+)/.exec(text)?.[1]?.toUpperCase() ?? 'QUERY';
  const table = /\b(?:FROM|INTO|UPDATE|JOIN)\s+([A-Za-z_][A-Za-z0-9_]*)/i.exec(text)?.[1]?.slice(0, 32);
  const hash = createHash('sha1').update(text).digest('base64url').slice(0, 10);
  return [operation.slice(0, 8), table, hash].filter(Boolean).join(' ');
}

type QueryConfigLike = { text?: unknown; name?: unknown; values?: unknown; submit?: unknown };

/** A query as it goes out: with the name its text has on this connection, when it has one. */
export interface NamedQuery {
  config: unknown;
  values: unknown;
  /** The text that was named; undefined when the query goes out as it came. */
  text?: string;
}

/**
 * The query a parameterised statement becomes: named, so the server parses and plans its text
 * once per connection and each later call only binds and executes it (docs/decisions/0042).
 * Queries without parameters stay on the simple protocol (BEGIN, COMMIT, multi-statement
 * scripts such as migrations cannot be prepared); a query that already has a name, or is a
 * Query/Cursor object, is left as it is. `nameFor` gives the text's name on the connection, or
 * undefined when it has no room for another.
 */
export function namedQuery(
  config: unknown,
  values: unknown,
  nameFor: (text: string) => string | undefined,
): NamedQuery {
  const asObject: QueryConfigLike | undefined =
    typeof config === 'object' && config !== null ? (config as QueryConfigLike) : undefined;
  if (asObject && (typeof asObject.submit === 'function' || asObject.name !== undefined))
    return { config, values };
  const text = typeof config === 'string' ? config : asObject?.text;
  const parameters = Array.isArray(values) ? values : asObject?.values;
  if (typeof text !== 'string' || !Array.isArray(parameters) || parameters.length === 0)
    return { config, values };
  const name = nameFor(text);
  if (name === undefined) return { config, values };
  return {
    config: { ...asObject, text, name, values: parameters },
    values: typeof values === 'function' ? values : undefined,
    text,
  };
}

/**
 * A prepared statement whose result columns changed under it (`SELECT *` or `RETURNING *` on a
 * table a migration altered): the server refuses to run it before doing anything.
 */
export function isStalePlan(error: unknown): boolean {
  return (
    error instanceof Error &&
    (error as { code?: unknown }).code === '0A000' &&
    error.message.includes('cached plan must not change result type')
  );
}

type Callback = (error: Error | null, result: pg.QueryResult) => void;

/**
 * A pg client that names every parameterised statement (see `namedQuery`). A statement made stale
 * by a migration that ran while this connection was open is prepared again under a new name; a
 * query outside a transaction is then retried once (the server refused it before running it),
 * one inside fails as the transaction's first error would. A connection pooler in transaction
 * mode (PgBouncer before 1.21, or without `max_prepared_statements`) loses prepared statements
 * between transactions: `DATABASE_PREPARED_STATEMENTS=false` turns naming off.
 */
export class PreparingClient extends pg.Client {
  /** Query text → its statement name on this connection. */
  readonly #names = new Map<string, string>();
  #renamed = 0;

  #nameFor(text: string): string | undefined {
    const known = this.#names.get(text);
    if (known !== undefined || this.#names.size >= MAX_PREPARED_PER_CONNECTION) return known;
    const name = statementName(text);
    this.#names.set(text, name);
    return name;
  }

  #rename(text: string): void {
    this.#renamed += 1;
    this.#names.set(text, `${statementName(text)}_${this.#renamed}`);
  }

  // biome-ignore lint/suspicious/noExplicitAny: pg's query has a dozen overloads; this forwards them all.
  override query(config: any, values?: any, callback?: any): any {
    const nameFor = (text: string) => this.#nameFor(text);
    const request = namedQuery(config, values, nameFor);
    const text = request.text;
    if (text === undefined) return super.query(config, values, callback);
    // Retrying is safe only where a refused statement leaves nothing behind: outside a transaction.
    const outsideTransaction = this.getTransactionStatus() === 'I';
    const retry = () => namedQuery(config, values, nameFor).config as pg.QueryConfig;
    const done: unknown = typeof values === 'function' ? values : callback;
    if (typeof done === 'function') {
      const reply = done as Callback;
      return super.query(request.config as pg.QueryConfig, (error: Error | null, result: pg.QueryResult) => {
        if (!isStalePlan(error)) return reply(error, result);
        this.#rename(text);
        if (!outsideTransaction) return reply(error, result);
        void super.query(retry(), reply);
      });
    }
    return (super.query(request.config as pg.QueryConfig) as Promise<pg.QueryResult>).catch(
      (error: unknown) => {
        if (!isStalePlan(error)) throw error;
        this.#rename(text);
        if (!outsideTransaction) throw error;
        return super.query(retry());
      },
    );
  }
}
