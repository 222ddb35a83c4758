import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testUrls } from '../../../test/support/urls.ts';
import {
  createProject,
  createSession,
  createUser,
  recordRunLaunch,
  upgradeSessionDefinitions,
} from '../src/gateway/index.ts';
import { listRunDefinitions, sessionDefinitions, withTransaction } from '../src/index.ts';
import { createRun, startRun } from '../src/router/index.ts';
import { definitionHash, type RoleDefinition } from '../src/shared-tables/definitions.ts';
import { createTestDatabase, type TestDatabase } from '../src/testing.ts';
import { bumpRunEpoch, seedRoleDefinition, startRunStep } from '../src/workers/index.ts';

let database: TestDatabase;
let projectId: string;
let userId: string;
beforeAll(async () => {
  database = await createTestDatabase({ serverUrl: testUrls.database });
  userId = (await createUser(database.pool, { email: 'definitions@example.com', displayName: 'D' })).id;
  projectId = (await createProject(database.pool, { ownerId: userId, title: 'D' })).id;
});
afterAll(async () => {
  await database.drop();
});

const definition = (prompt: string): RoleDefinition => ({
  prompt,
  tools: ['create_file', 'query_files'],
  model: { primary: 'm' },
  budget: { max_tool_turns: 8 },
});
const seed = (prompt: string) =>
  withTransaction(database.pool, (client) => seedRoleDefinition(client, 'writer', definition(prompt)));
const session = async () => (await createSession(database.pool, { projectId, userId, title: 's' })).sessionId;
const promptFor = async (sessionId: string, runId = crypto.randomUUID()) =>
  (await startRunStep(database.pool, { sessionId, runId, role: 'writer' })).pinned?.definition.prompt ??
  'fallback';

/** What a run's launch writes pins the session's definitions (the gateway's launch statement). */
const launch = (sessionId: string) =>
  recordRunLaunch(database.pool, { projectId, sessionId, runId: crypto.randomUUID(), userId, message: 'go' });

describe('role definitions by content hash, pinned per session', () => {
  it('hashes content regardless of key order', () => {
    const a = definitionHash(definition('p'));
    const b = definitionHash({
      budget: { max_tool_turns: 8 },
      model: { primary: 'm' },
      tools: ['create_file', 'query_files'],
      prompt: 'p',
    });
    expect(a).toBe(b);
    expect(definitionHash(definition('q'))).not.toBe(a);
  });

  it('same content is the same version; a change is the next; a session keeps its pin until upgraded', async () => {
    expect(await seed('写作 v1')).toBe(1);
    expect(await seed('写作 v1')).toBe(1);
    const old = await session();
    await launch(old);
    const runId = crypto.randomUUID();
    expect(await promptFor(old, runId)).toBe('写作 v1');
    expect(await listRunDefinitions(database.pool, runId)).toEqual({ writer: 1 });

    expect(await seed('写作 v2')).toBe(2);
    expect(await promptFor(old)).toBe('写作 v1');
    const fresh = await session();
    // A role without a pin (no launch pinned it) runs with the current version, unpinned: only
    // the gateway's launch writes pins.
    const freshRun = crypto.randomUUID();
    expect(await promptFor(fresh, freshRun)).toBe('写作 v2');
    expect(await listRunDefinitions(database.pool, freshRun)).toEqual({ writer: 2 });
    expect((await sessionDefinitions(database.pool, fresh)).pinned).toEqual({});
    expect(await sessionDefinitions(database.pool, old)).toEqual({
      pinned: { writer: 1 },
      current: { writer: 2 },
    });

    await upgradeSessionDefinitions(database.pool, old);
    expect(await promptFor(old)).toBe('写作 v2');
    // Going back to the old content (a rollback) makes version 1 current again, not a third one.
    expect(await seed('写作 v1')).toBe(1);
    expect((await sessionDefinitions(database.pool, fresh)).current).toEqual({ writer: 1 });
    // The session's next launch pins what is current then.
    await launch(fresh);
    expect((await sessionDefinitions(database.pool, fresh)).pinned).toEqual({ writer: 1 });
  });

  it("reads the run's phase and write epoch with the definition, in the same statement", async () => {
    const sessionId = await session();
    const runId = crypto.randomUUID();
    // No such run (yet): the definition still resolves; the worker drops such a task.
    expect(await startRunStep(database.pool, { sessionId, runId, role: 'writer' })).toMatchObject({
      run: null,
      pinned: { role: 'writer', version: 1 },
    });
    await createRun(database.pool, { runId, sessionId, projectId, userId, generationMode: 'fast' });
    expect((await startRunStep(database.pool, { sessionId, runId, role: 'writer' })).run).toEqual({
      phase: 'idle',
      epoch: 0,
    });
    await startRun(database.pool, runId);
    // A worker that takes a redelivery over bumps the fence: the next step start reads it.
    expect(await bumpRunEpoch(database.pool, runId)).toBe(1);
    const started = await startRunStep(database.pool, { sessionId, runId, role: 'writer' });
    expect(started.run).toEqual({ phase: 'running', epoch: 1 });
    expect(started.pinned?.definition.prompt).toBe('写作 v1');
    // Ids that are not uuids read as nothing, without a database error.
    expect(await startRunStep(database.pool, { sessionId: 'x', runId, role: 'writer' })).toEqual({
      run: null,
      pinned: null,
    });
  });
});
