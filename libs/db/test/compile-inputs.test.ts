import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testUrls } from '../../../test/support/urls.ts';
import { saveCompaction, saveRunTurnContext } from '../src/context/index.ts';
import {
  appendMessage,
  createFile,
  createProject,
  createSession,
  createUser,
  saveSkillPackage,
} from '../src/gateway/index.ts';
import {
  getFile,
  getLatestCompaction,
  getProject,
  listHistoryMessages,
  listRunSkills,
  listRunWrittenFileIds,
  readCompileBasics,
} from '../src/index.ts';
import { createTestDatabase, type TestDatabase } from '../src/testing.ts';
import { saveAiBody } from '../src/workers/index.ts';

// The compile's first reads are one statement (compile-inputs.ts): each part must read what the
// reader of its own reads, with the pool's formats (timestamps with microseconds, numbers).
let database: TestDatabase;
let userId: string;

beforeAll(async () => {
  database = await createTestDatabase({ serverUrl: testUrls.database });
  userId = (await createUser(database.pool, { email: 'compile@example.com', displayName: 'C' })).id;
});
afterAll(async () => {
  await database.drop();
});

const basicsOf = (input: { projectId: string; sessionId: string; runId: string; reviewTargets?: boolean }) =>
  readCompileBasics(database.pool, {
    ...input,
    userId,
    recentLimit: 12,
    reviewTargets: input.reviewTargets ?? false,
  });

describe('readCompileBasics', () => {
  it('reads what the single readers read, in their order and formats', async () => {
    const project = await createProject(database.pool, { ownerId: userId, title: '长夜' });
    const projectId = project.id;
    const first = await createFile(database.pool, { projectId, title: '第一章', fileType: 'draft' });
    const second = await createFile(database.pool, { projectId, title: '人物', fileType: 'character' });
    const runId = randomUUID();
    await saveAiBody(database.pool, {
      projectId,
      fileId: first.id,
      baseVersion: 0,
      content: '夜色很深。',
      runId,
      writeKey: `${runId}:s0:t0:body:${first.id}`,
    });
    await database.pool.query(`UPDATE projects SET task_board = $2::jsonb WHERE id = $1`, [
      projectId,
      JSON.stringify([{ id: 't1', title: '写第一章', status: 'doing' }]),
    ]);
    const session = await createSession(database.pool, { projectId, userId, title: 's' });
    for (let index = 0; index < 15; index++) {
      await appendMessage(database.pool, {
        sessionId: session.sessionId,
        role: index % 2 === 0 ? 'user' : 'assistant',
        content: `第${index}句`,
        ...(index === 13 ? { breadcrumbs: [{ kind: 'file', id: first.id }] } : {}),
      });
    }
    await saveCompaction(database.pool, {
      sessionId: session.sessionId,
      throughSeq: 3,
      summary: '前情',
      archiveFileId: second.id,
      archiveSection: null,
      compactedMessages: 3,
    });
    await saveSkillPackage(database.pool, userId, {
      name: 'pacing',
      description: '节奏',
      content: '慢一点',
      metadata: { name: 'pacing', description: '节奏' },
      resources: [],
    });
    await saveRunTurnContext(database.pool, runId, { v: 1, turn: '记下的' });

    const basics = await basicsOf({ projectId, sessionId: session.sessionId, runId, reviewTargets: true });

    expect(basics.project).toEqual(await getProject(database.pool, projectId));
    expect(basics.project?.createdAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
    expect(basics.summaries.map((file) => file.title)).toEqual(['人物', '第一章']);
    for (const summary of basics.summaries) {
      const file = (await getFile(database.pool, projectId, summary.id))!;
      expect(summary).toMatchObject({
        folder: file.folder,
        fileType: file.fileType,
        visibility: file.visibility,
        chars: file.content.length,
        version: file.version,
        createdAt: file.createdAt,
        updatedAt: file.updatedAt,
        unaccepted: null,
      });
    }
    expect(basics.reviewTargets).toEqual(await listRunWrittenFileIds(database.pool, runId));
    expect(basics.reviewTargets).toEqual([first.id]);
    // Only the quality reviewer asks for them.
    const unasked = await basicsOf({ projectId, sessionId: session.sessionId, runId });
    expect(unasked.reviewTargets).toEqual([]);
    expect(basics.catalog).toEqual(await listRunSkills(database.pool, { runId, userId }));
    expect(basics.catalog).toEqual([{ name: 'pacing', description: '节奏' }]);
    expect(basics.compaction).toEqual(await getLatestCompaction(database.pool, session.sessionId));
    expect(basics.compaction).toMatchObject({ throughSeq: 3, archiveFileId: second.id });
    const recent = await listHistoryMessages(database.pool, session.sessionId, { limit: 12 });
    expect(basics.recent).toEqual(recent);
    expect(basics.recent.map((message) => message.content)).toEqual(
      Array.from({ length: 12 }, (_, index) => `第${index + 3}句`),
    );
    expect(basics.recent.find((message) => message.content === '第13句')?.breadcrumbs).toEqual([
      { kind: 'file', id: first.id },
    ]);
    expect(basics.storedTurn).toEqual({ v: 1, turn: '记下的' });
    expect(basics.taskBoard).toEqual([{ id: 't1', title: '写第一章', status: 'doing' }]);
  });

  it('reads the parts of a project and session that hold nothing as empty', async () => {
    const project = await createProject(database.pool, { ownerId: userId, title: '空' });
    const session = await createSession(database.pool, { projectId: project.id, userId, title: 's' });
    const runId = randomUUID();
    const basics = await basicsOf({ projectId: project.id, sessionId: session.sessionId, runId });
    expect(basics).toMatchObject({
      summaries: [],
      reviewTargets: [],
      compaction: null,
      recent: [],
      storedTurn: null,
      taskBoard: [],
    });
    expect(basics.project?.title).toBe('空');
  });

  it('finds no project for an unknown or malformed id, without failing', async () => {
    const unknown = await basicsOf({ projectId: randomUUID(), sessionId: randomUUID(), runId: randomUUID() });
    expect(unknown.project).toBeNull();
    const malformed = await basicsOf({ projectId: 'x', sessionId: 'y', runId: 'z' });
    expect(malformed).toMatchObject({ project: null, summaries: [], catalog: [], recent: [] });
  });
});
