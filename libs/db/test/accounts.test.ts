import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testUrls } from '../../../test/support/urls.ts';
import {
  addProjectMember,
  createApiKey,
  createProject,
  createUser,
  findUserByApiKey,
  revokeApiKey,
} from '../src/gateway/index.ts';
import { listProjectsForUser } from '../src/gateway/projects.ts';
import { hashApiKey } from '../src/gateway/users.ts';
import { getCredits, getProjectForUser } from '../src/index.ts';
import { seedDemo } from '../src/seed.ts';
import { createTestDatabase, type TestDatabase } from '../src/testing.ts';

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase({ serverUrl: testUrls.database });
});
afterAll(async () => {
  await database.drop();
});

describe('api keys', () => {
  it('finds the user by bearer key, stores only the hash, and ignores revoked keys', async () => {
    const user = await createUser(database.pool, { email: 'keys@example.com', displayName: 'Keys' });
    const { id, key } = await createApiKey(database.pool, user.id, 'laptop');
    expect(key).toMatch(/^qk_[A-Za-z0-9_-]{43}$/);

    const { rows } = await database.pool.query('SELECT key_hash FROM api_keys WHERE id = $1', [id]);
    expect(rows[0]).toEqual({ key_hash: hashApiKey(key) });
    expect(JSON.stringify(rows)).not.toContain(key);

    expect(await findUserByApiKey(database.pool, key)).toMatchObject({ id: user.id, role: 'user' });
    expect(await findUserByApiKey(database.pool, `${key}x`)).toBeNull();

    expect(await revokeApiKey(database.pool, user.id, id)).toBe(true);
    expect(await findUserByApiKey(database.pool, key)).toBeNull();
  });
});

describe('project access', () => {
  it('lets members in with their role and hides the project from everyone else', async () => {
    const owner = await createUser(database.pool, { email: 'owner@example.com', displayName: 'Owner' });
    const editor = await createUser(database.pool, { email: 'editor@example.com', displayName: 'Editor' });
    const stranger = await createUser(database.pool, {
      email: 'stranger@example.com',
      displayName: 'Stranger',
    });
    const project = await createProject(database.pool, { ownerId: owner.id, title: '长夜' });
    expect(project).toMatchObject({ ownerId: owner.id, title: '长夜', projectType: 'novel', notes: '' });

    expect(await getProjectForUser(database.pool, project.id, owner.id)).toEqual({
      project,
      memberRole: 'owner',
    });
    expect(await getProjectForUser(database.pool, project.id, stranger.id)).toBeNull();
    expect(await getProjectForUser(database.pool, project.id, editor.id)).toBeNull();

    await addProjectMember(database.pool, project.id, editor.id, 'editor');
    expect(await getProjectForUser(database.pool, project.id, editor.id)).toMatchObject({
      memberRole: 'editor',
    });
    expect((await listProjectsForUser(database.pool, editor.id)).map((entry) => entry.project.id)).toEqual([
      project.id,
    ]);
    // Malformed ids are simply "not found", never a database error.
    expect(await getProjectForUser(database.pool, 'not-a-uuid', owner.id)).toBeNull();
  });
});

describe('seedDemo', () => {
  it('is idempotent and keeps a fixed key usable', async () => {
    const fixedKey = 'qk_demo_fixed_key_for_tests';
    const first = await seedDemo(database.pool, { apiKey: fixedKey });
    const second = await seedDemo(database.pool, { apiKey: fixedKey });
    expect(second).toEqual(first);
    expect(first.apiKey).toBe(fixedKey);
    expect(await findUserByApiKey(database.pool, fixedKey)).toMatchObject({ id: first.userId });
    expect(await getCredits(database.pool, first.userId)).toBe(100);
    expect(await getProjectForUser(database.pool, first.projectId, first.userId)).toMatchObject({
      project: { title: '雨夜书店' },
      memberRole: 'owner',
    });

    const third = await seedDemo(database.pool);
    expect(third.userId).toBe(first.userId);
    expect(third.projectId).toBe(first.projectId);
    expect(await findUserByApiKey(database.pool, third.apiKey)).toMatchObject({ id: first.userId });
  });
});
