import { createHash, randomBytes } from 'node:crypto';
import { isUuid } from '../ids.ts';
import type { Queryable } from '../pool.ts';

export type UserRole = 'user' | 'admin';

export interface User {
  id: string;
  email: string;
  displayName: string;
  role: UserRole;
  createdAt: string;
}

interface UserRow {
  id: string;
  email: string;
  display_name: string;
  role: UserRole;
  created_at: string;
}

const USER_COLUMNS = 'u.id, u.email, u.display_name, u.role, u.created_at';

function toUser(row: UserRow): User {
  return {
    id: row.id,
    email: row.email,
    displayName: row.display_name,
    role: row.role,
    createdAt: row.created_at,
  };
}

export async function createUser(
  db: Queryable,
  input: { email: string; displayName: string; role?: UserRole },
): Promise<User> {
  const { rows } = await db.query<UserRow>(
    `INSERT INTO users AS u (email, display_name, role) VALUES ($1, $2, $3) RETURNING ${USER_COLUMNS}`,
    [input.email, input.displayName, input.role ?? 'user'],
  );
  return toUser(rows[0]!);
}

export async function getUser(db: Queryable, userId: string): Promise<User | null> {
  if (!isUuid(userId)) return null;
  const { rows } = await db.query<UserRow>(`SELECT ${USER_COLUMNS} FROM users u WHERE u.id = $1`, [userId]);
  return rows[0] ? toUser(rows[0]) : null;
}

export async function findUserByEmail(db: Queryable, email: string): Promise<User | null> {
  const { rows } = await db.query<UserRow>(`SELECT ${USER_COLUMNS} FROM users u WHERE u.email = $1`, [email]);
  return rows[0] ? toUser(rows[0]) : null;
}

/** The stored form of a bearer key: sha256 hex, so a leaked table leaks no usable keys. */
export function hashApiKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

/** How much of a key is stored in the clear to list it by: `qk_` and 8 characters of the secret. */
export const API_KEY_PREFIX_LENGTH = 11;

export function generateApiKey(): string {
  return `qk_${randomBytes(32).toString('base64url')}`;
}

/** Issues a new random key; the caller shows it once, only its hash is kept. */
export async function createApiKey(
  db: Queryable,
  userId: string,
  label: string,
): Promise<{ id: string; key: string }> {
  const key = generateApiKey();
  const id = await storeApiKey(db, userId, key, label);
  return { id: id!, key };
}

/**
 * Stores a caller-chosen key (the demo's fixed key). Storing the same key for the same user
 * again is a no-op; returns the key's id, or null when the key belongs to another user.
 */
export async function storeApiKey(
  db: Queryable,
  userId: string,
  key: string,
  label: string,
): Promise<string | null> {
  const { rows } = await db.query<{ id: string; user_id: string }>(
    `INSERT INTO api_keys (user_id, key_hash, label, prefix) VALUES ($1, $2, $3, $4)
     ON CONFLICT (key_hash) DO UPDATE SET key_hash = EXCLUDED.key_hash
     RETURNING id, user_id`,
    [userId, hashApiKey(key), label, key.slice(0, API_KEY_PREFIX_LENGTH)],
  );
  const row = rows[0]!;
  return row.user_id === userId ? row.id : null;
}

/**
 * The key's user and the key's id. `last_used_at` is refreshed at most once a minute per key, so
 * authenticating a busy client does not write a row per request.
 */
export async function findApiKeyUser(
  db: Queryable,
  key: string,
): Promise<{ user: User; keyId: string } | null> {
  const { rows } = await db.query<UserRow & { key_id: string }>(
    `WITH k AS (
       SELECT id, user_id, last_used_at FROM api_keys WHERE key_hash = $1 AND revoked_at IS NULL
     ), touched AS (
       UPDATE api_keys SET last_used_at = now() FROM k
       WHERE api_keys.id = k.id AND (k.last_used_at IS NULL OR k.last_used_at < now() - interval '1 minute')
     )
     SELECT ${USER_COLUMNS}, k.id AS key_id FROM k JOIN users u ON u.id = k.user_id`,
    [hashApiKey(key)],
  );
  return rows[0] ? { user: toUser(rows[0]), keyId: rows[0].key_id } : null;
}

export async function findUserByApiKey(db: Queryable, key: string): Promise<User | null> {
  return (await findApiKeyUser(db, key))?.user ?? null;
}

export async function revokeApiKey(db: Queryable, userId: string, keyId: string): Promise<boolean> {
  if (!isUuid(keyId)) return false;
  const { rowCount } = await db.query(
    'UPDATE api_keys SET revoked_at = now() WHERE id = $1 AND user_id = $2 AND revoked_at IS NULL',
    [keyId, userId],
  );
  return rowCount === 1;
}

export interface ApiKeySummary {
  id: string;
  name: string;
  prefix: string;
  createdAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
  /** Runs started with the key, those charged a credit, and their tokens (all time, today UTC). */
  usage: { runs: number; chargedRuns: number; totalTokens: number; todayTokens: number };
}

/** The user's keys, newest first, revoked ones included (listed by prefix; the secret is gone). */
export async function listApiKeys(db: Queryable, userId: string): Promise<ApiKeySummary[]> {
  const { rows } = await db.query<{
    id: string;
    label: string;
    prefix: string;
    created_at: string;
    last_used_at: string | null;
    revoked_at: string | null;
    runs: number;
    charged_runs: number;
    total_tokens: number;
    today_tokens: number;
  }>(
    `SELECT k.id, k.label, k.prefix, k.created_at, k.last_used_at, k.revoked_at,
       (SELECT count(*) FROM runs r WHERE r.api_key_id = k.id) AS runs,
       (SELECT count(*) FROM runs r WHERE r.api_key_id = k.id AND r.billing_decision = 'charge') AS charged_runs,
       (SELECT COALESCE(sum(u.total_tokens), 0) FROM usage_records u JOIN runs r ON r.run_id = u.run_id
        WHERE r.api_key_id = k.id) AS total_tokens,
       (SELECT COALESCE(sum(u.total_tokens), 0) FROM usage_records u JOIN runs r ON r.run_id = u.run_id
        WHERE r.api_key_id = k.id AND u.created_at >= date_trunc('day', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC')
         AS today_tokens
     FROM api_keys k WHERE k.user_id = $1 ORDER BY k.created_at DESC, k.id`,
    [userId],
  );
  return rows.map((row) => ({
    id: row.id,
    name: row.label,
    prefix: row.prefix,
    createdAt: row.created_at,
    lastUsedAt: row.last_used_at,
    revokedAt: row.revoked_at,
    usage: {
      runs: Number(row.runs),
      chargedRuns: Number(row.charged_runs),
      totalTokens: Number(row.total_tokens),
      todayTokens: Number(row.today_tokens),
    },
  }));
}
