import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testUrls } from '../../../test/support/urls.ts';
import {
  createProject,
  createSession,
  createUser,
  recordRunLaunch,
  saveSkillPackage,
  setSkillEnabled,
  upgradeSessionSkills,
} from '../src/gateway/index.ts';
import { skillContentHash } from '../src/gateway/skill-versions.ts';
import {
  getRunSkill,
  getSkillVersionResource,
  listRunSkills,
  listRunSkillVersions,
  type SkillPackageInput,
  sessionSkillVersions,
  withTransaction,
} from '../src/index.ts';
import { createTestDatabase, type TestDatabase } from '../src/testing.ts';

/** docs/kernel.md "Definitions and pinning": skill versions, pinned per session, read per run. */
let database: TestDatabase;
let projectId: string;
let userId: string;
beforeAll(async () => {
  database = await createTestDatabase({ serverUrl: testUrls.database });
  userId = (await createUser(database.pool, { email: 'skill-versions@example.com', displayName: 'S' })).id;
  projectId = (await createProject(database.pool, { ownerId: userId, title: 'S' })).id;
});
afterAll(async () => {
  await database.drop();
});

const pack = (content: string, resource = '参考'): SkillPackageInput => ({
  name: 'pacing',
  description: '节奏',
  content,
  metadata: { name: 'pacing', description: '节奏' },
  resources: [{ path: 'ref.md', content: resource }],
});
const session = async () => (await createSession(database.pool, { projectId, userId, title: 's' })).sessionId;
const launch = async (sessionId: string) => {
  const runId = crypto.randomUUID();
  await withTransaction(database.pool, (client) =>
    recordRunLaunch(client, { projectId, sessionId, runId, userId, message: 'go' }),
  );
  return runId;
};
const read = async (runId: string) => {
  const skill = await getRunSkill(database.pool, { runId, userId, name: 'pacing' });
  const resource = skill
    ? await getSkillVersionResource(database.pool, {
        skillId: skill.id,
        version: skill.version,
        path: 'ref.md',
      })
    : null;
  return { version: skill?.version, content: skill?.content, resource };
};

describe('skill versions', () => {
  it('hashes the package: resource order and metadata key order do not matter, their text does', () => {
    const a = pack('m');
    const reordered = {
      ...a,
      metadata: { description: '节奏', name: 'pacing' },
      resources: [...a.resources, { path: 'a.md', content: 'x' }].reverse(),
    };
    expect(skillContentHash({ ...a, resources: [...a.resources, { path: 'a.md', content: 'x' }] })).toBe(
      skillContentHash(reordered),
    );
    expect(skillContentHash(pack('m', '改'))).not.toBe(skillContentHash(a));
  });

  it('an edit is the next version; a session reads what it pinned until upgraded; a new session reads the newest', async () => {
    expect((await saveSkillPackage(database.pool, userId, pack('方法一'))).version).toBe(1);
    expect((await saveSkillPackage(database.pool, userId, pack('方法一'))).version).toBe(1);
    const old = await session();
    const first = await launch(old);
    expect(await read(first)).toEqual({ version: 1, content: '方法一', resource: '参考' });

    expect((await saveSkillPackage(database.pool, userId, pack('方法二', '新参考'))).version).toBe(2);
    const again = await launch(old);
    expect(await read(again)).toEqual({ version: 1, content: '方法一', resource: '参考' });
    expect(await listRunSkillVersions(database.pool, again)).toEqual({ pacing: 1 });

    const fresh = await session();
    const freshRun = await launch(fresh);
    expect(await read(freshRun)).toEqual({ version: 2, content: '方法二', resource: '新参考' });
    expect(await sessionSkillVersions(database.pool, old)).toEqual({
      pinned: { pacing: 1 },
      current: { pacing: 2 },
    });

    await withTransaction(database.pool, (client) => upgradeSessionSkills(client, old));
    expect(await read(await launch(old))).toMatchObject({ version: 2, content: '方法二' });
    // The earlier run's record is unchanged.
    expect(await listRunSkillVersions(database.pool, first)).toEqual({ pacing: 1 });
  });

  it('a skill disabled at launch is not in the run’s record; a run with no record reads the newest enabled versions', async () => {
    await setSkillEnabled(database.pool, userId, 'pacing', false);
    const offRun = await launch(await session());
    expect(await listRunSkillVersions(database.pool, offRun)).toEqual({});
    expect(await listRunSkills(database.pool, { runId: offRun, userId })).toEqual([]);
    await setSkillEnabled(database.pool, userId, 'pacing', true);
    const unrecorded = crypto.randomUUID();
    expect(await listRunSkills(database.pool, { runId: unrecorded, userId })).toEqual([
      { name: 'pacing', description: '节奏' },
    ]);
    expect(await read(unrecorded)).toMatchObject({ version: 2 });
  });
});
