import type pg from 'pg';
import { ensureQuotaAccount } from './billing/quota.ts';
import { createProject } from './gateway/projects.ts';
import { createApiKey, createUser, findUserByEmail, storeApiKey } from './gateway/users.ts';
import { withTransaction } from './pool.ts';

export const DEMO_EMAIL = 'demo@quill.local';
export const DEMO_PROJECT_TITLE = '雨夜书店';
// Serialises concurrent seeders so two of them never create two demo projects.
const SEED_LOCK_KEY = '7105524163712099';

export interface DemoSeed {
  userId: string;
  projectId: string;
  apiKey: string;
}

export class ApiKeyTakenError extends Error {
  constructor() {
    super('the requested demo API key already belongs to another user');
    this.name = new.target.name;
  }
}

/**
 * Creates (once, found again by email) the demo user with a quota account and the demo project.
 * With `apiKey` that exact key is stored for the user (seeding twice is fine); without it a new
 * key is issued on every call, since stored keys are only hashes.
 */
export async function seedDemo(
  pool: pg.Pool,
  options: { apiKey?: string; credits?: number } = {},
): Promise<DemoSeed> {
  return withTransaction(pool, async (client) => {
    await client.query('SELECT pg_advisory_xact_lock($1)', [SEED_LOCK_KEY]);
    const user =
      (await findUserByEmail(client, DEMO_EMAIL)) ??
      (await createUser(client, { email: DEMO_EMAIL, displayName: 'Demo Author' }));
    await ensureQuotaAccount(client, user.id, options.credits ?? 100);

    const { rows } = await client.query<{ id: string }>(
      'SELECT id FROM projects WHERE owner_id = $1 AND title = $2 ORDER BY created_at LIMIT 1',
      [user.id, DEMO_PROJECT_TITLE],
    );
    const projectId =
      rows[0]?.id ?? (await createProject(client, { ownerId: user.id, title: DEMO_PROJECT_TITLE })).id;

    let apiKey = options.apiKey;
    if (apiKey === undefined) {
      apiKey = (await createApiKey(client, user.id, 'demo')).key;
    } else if ((await storeApiKey(client, user.id, apiKey, 'demo')) === null) {
      throw new ApiKeyTakenError();
    }
    return { userId: user.id, projectId, apiKey };
  });
}
