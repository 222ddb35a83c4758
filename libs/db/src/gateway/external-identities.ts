import { createHash } from 'node:crypto';
import type pg from 'pg';
import { type Queryable, withTransaction } from '../pool.ts';
import { createUser, getUser, type User } from './users.ts';

export interface ExternalIdentity {
  /** The provider's `iss`. */
  issuer: string;
  /** The provider's `sub`: stable per account and provider. */
  subject: string;
  /** Shown in the product; the provider's `name` or `email` claim when it sends one. */
  displayName: string;
}

/**
 * The user behind a provider account, created on its first sign-in. Its e-mail is a stable
 * placeholder derived from the identity (the `users.email` column is unique and required), so
 * a provider's unverified `email` claim can never take over an existing account.
 */
export async function userForExternalIdentity(pool: pg.Pool, identity: ExternalIdentity): Promise<User> {
  const existing = await findUser(pool, identity);
  if (existing) return existing;
  return withTransaction(pool, async (client) => {
    // Two first requests at once: the advisory lock makes the second find the first's user.
    const digest = createHash('sha256').update(`${identity.issuer}\n${identity.subject}`).digest('hex');
    await client.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [digest]);
    const raced = await findUser(client, identity);
    if (raced) return raced;
    const user = await createUser(client, {
      email: `idp-${digest.slice(0, 32)}@external.invalid`,
      displayName: identity.displayName,
    });
    await client.query('INSERT INTO external_identities (issuer, subject, user_id) VALUES ($1, $2, $3)', [
      identity.issuer,
      identity.subject,
      user.id,
    ]);
    return user;
  });
}

async function findUser(db: Queryable, identity: ExternalIdentity): Promise<User | null> {
  const { rows } = await db.query<{ user_id: string }>(
    'SELECT user_id FROM external_identities WHERE issuer = $1 AND subject = $2',
    [identity.issuer, identity.subject],
  );
  return rows[0] ? getUser(db, rows[0].user_id) : null;
}
