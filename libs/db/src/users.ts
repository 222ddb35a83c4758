import { createHash, randomBytes } from 'node:crypto';
import { isUuid } from './ids.ts';
import type { Queryable } from './pool.ts';

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
    `INSERT INTO api_keys (user_id, key_hash, label) VALUES ($1, $2, $3)
     ON CONFLICT (key_hash) DO UPDATE SET key_hash = EXCLUDED.key_hash
     RETURNING id, user_id`,
    [userId, hashApiKey(key), label],
  );
  const row = rows[0]!;
  return row.user_id === userId ? row.id : null;
}

export async function findUserByApiKey(db: Queryable, key: string): Promise<User | null> {
  const { rows } = await db.query<UserRow>(
    `SELECT ${USER_COLUMNS} FROM api_keys k JOIN users u ON u.id = k.user_id
     WHERE k.key_hash = $1 AND k.revoked_at IS NULL`,
    [hashApiKey(key)],
  );
  return rows[0] ? toUser(rows[0]) : null;
}

export async function revokeApiKey(db: Queryable, userId: string, keyId: string): Promise<boolean> {
  if (!isUuid(keyId)) return false;
  const { rowCount } = await db.query(
    'UPDATE api_keys SET revoked_at = now() WHERE id = $1 AND user_id = $2 AND revoked_at IS NULL',
    [keyId, userId],
  );
  return rowCount === 1;
}
