import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testUrls } from '../../../test/support/urls.ts';
import {
  appendMessage,
  createBranch,
  createFile,
  createProject,
  createSession,
  createUser,
  ensureActiveBranch,
  restoreSnapshot,
  setActiveBranch,
  softDeleteFile,
  takeSnapshot,
  undoRun,
} from '../src/gateway/index.ts';
import { getFile, listHistoryMessages, listMessages, withRunFence } from '../src/index.ts';
import { createRun, finishRun, startRun } from '../src/router/index.ts';
import { createTestDatabase, type TestDatabase } from '../src/testing.ts';
import { saveFileContent } from '../src/workers/index.ts';

/** The change log, undo, restore and branch history against a real database (docs/kernel.md). */
let database: TestDatabase;
let userId: string;
beforeAll(async () => {
  database = await createTestDatabase({ serverUrl: testUrls.database });
  userId = (await createUser(database.pool, { email: 'restore@example.com', displayName: 'R' })).id;
});
afterAll(async () => {
  await database.drop();
});

async function projectWithRun(notes = '') {
  const project = await createProject(database.pool, { ownerId: userId, title: 'P', notes });
  const session = await createSession(database.pool, { projectId: project.id, userId, title: 's' });
  const runId = crypto.randomUUID();
  await createRun(database.pool, {
    runId,
    sessionId: session.sessionId,
    projectId: project.id,
    userId,
    generationMode: 'fast',
  });
  // A router took it: only a running run may write (docs/architecture.md "Phases").
  await startRun(database.pool, runId);
  return { projectId: project.id, sessionId: session.sessionId, runId };
}

const changes = async (projectId: string) =>
  (
    await database.pool.query(
      'SELECT file_id, run_id, restore, version, deleted FROM project_changes WHERE project_id = $1 ORDER BY id',
      [projectId],
    )
  ).rows;

describe('the change log', () => {
  it('attributes fenced writes to the run, others to the author, restores as restores', async () => {
    const { projectId, runId } = await projectWithRun();
    const file = await createFile(database.pool, { projectId, title: 'a', fileType: 'draft', content: 'x' });
    await takeSnapshot(database.pool, { projectId, kind: 'run_start', runId });
    await withRunFence(database.pool, { runId, epoch: 0 }, (client) =>
      saveFileContent(client, { fileId: file.id, content: 'y', source: 'ai', runId }),
    );
    await finishRun(database.pool, runId, { phase: 'done', stopReason: 'completed' });
    expect(await changes(projectId)).toEqual([
      { file_id: file.id, run_id: null, restore: false, version: 1, deleted: false },
      { file_id: file.id, run_id: runId, restore: false, version: 2, deleted: false },
    ]);
    const undone = await undoRun(database.pool, { projectId, runId, userId, force: false });
    expect(undone).toMatchObject({
      kind: 'restored',
      files: [{ fileId: file.id, action: 'reverted', version: 3 }],
    });
    expect((await changes(projectId)).at(-1)).toEqual({
      file_id: file.id,
      run_id: null,
      restore: true,
      version: 3,
      deleted: false,
    });
  });

  it('undoes a run’s notes change, and a later author notes change is a conflict', async () => {
    const { projectId, runId } = await projectWithRun('作者的笔记');
    await takeSnapshot(database.pool, { projectId, kind: 'run_start', runId });
    await withRunFence(database.pool, { runId, epoch: 0 }, (client) =>
      client.query(`UPDATE projects SET notes = 'AI 改过', notes_version = notes_version + 1 WHERE id = $1`, [
        projectId,
      ]),
    );
    await finishRun(database.pool, runId, { phase: 'done', stopReason: 'completed' });
    await database.pool.query(
      `UPDATE projects SET notes = '作者又改', notes_version = notes_version + 1 WHERE id = $1`,
      [projectId],
    );
    const refused = await undoRun(database.pool, { projectId, runId, userId, force: false });
    expect(refused).toEqual({
      kind: 'conflict',
      conflicts: [{ fileId: null, title: '', changedBy: 'author', runId: null }],
    });
    const forced = await undoRun(database.pool, { projectId, runId, userId, force: true });
    expect(forced).toMatchObject({ kind: 'restored', notes: true });
    const { rows } = await database.pool.query('SELECT notes FROM projects WHERE id = $1', [projectId]);
    expect(rows[0].notes).toBe('作者的笔记');
  });

  it('leaves a file alone that is already back where it started (a removed placeholder is no conflict)', async () => {
    const { projectId, runId } = await projectWithRun();
    await takeSnapshot(database.pool, { projectId, kind: 'run_start', runId });
    const placeholder = await withRunFence(database.pool, { runId, epoch: 0 }, (client) =>
      createFile(client, { projectId, title: '空', fileType: 'draft' }),
    );
    await finishRun(database.pool, runId, { phase: 'done', stopReason: 'completed' });
    // Removed outside the fence (as a writer removes an ended, refunded round's blank placeholders).
    await softDeleteFile(database.pool, projectId, placeholder.id);
    expect(await undoRun(database.pool, { projectId, runId, userId, force: false })).toMatchObject({
      kind: 'restored',
      files: [],
    });
  });

  it('restores a deleted file and a new one away; the author’s deletion since is a conflict', async () => {
    const { projectId } = await projectWithRun();
    const kept = await createFile(database.pool, {
      projectId,
      title: 'kept',
      fileType: 'note',
      content: 'k',
    });
    const snapshot = (await takeSnapshot(database.pool, { projectId, kind: 'manual' }))!;
    await softDeleteFile(database.pool, projectId, kept.id);
    const later = await createFile(database.pool, {
      projectId,
      title: 'later',
      fileType: 'note',
      content: 'l',
    });
    const refused = await restoreSnapshot(database.pool, { projectId, snapshot, userId, force: false });
    expect(
      refused.kind === 'conflict' && refused.conflicts.map((conflict) => conflict.fileId).sort(),
    ).toEqual([kept.id, later.id].sort());
    const forced = await restoreSnapshot(database.pool, { projectId, snapshot, userId, force: true });
    expect(forced.kind).toBe('restored');
    expect(await getFile(database.pool, projectId, kept.id)).toMatchObject({ content: 'k', version: 1 });
    expect(await getFile(database.pool, projectId, later.id)).toBeNull();
  });
});

describe('branch history', () => {
  it('a branch sees its own messages and its ancestors’ up to the smallest fork point', async () => {
    const { sessionId } = await projectWithRun();
    const say = (content: string) => appendMessage(database.pool, { sessionId, role: 'user', content });
    const m1 = await say('m1');
    const m2 = await say('m2');
    await say('m3');
    expect((await listHistoryMessages(database.pool, sessionId)).map((m) => m.content)).toEqual([
      'm1',
      'm2',
      'm3',
    ]);

    const root = await ensureActiveBranch(database.pool, sessionId);
    const seqOf = async (id: string) =>
      Number((await database.pool.query('SELECT seq FROM messages WHERE id = $1', [id])).rows[0].seq);
    const b = await createBranch(database.pool, {
      sessionId,
      parentId: root,
      forkSeq: await seqOf(m2.id),
      baseSnapshotId: null,
    });
    await setActiveBranch(database.pool, sessionId, b);
    await say('b1');
    expect((await listHistoryMessages(database.pool, sessionId)).map((m) => m.content)).toEqual([
      'm1',
      'm2',
      'b1',
    ]);

    // A fork of b taken before m2 inherits only m1, though b itself inherits m2.
    const c = await createBranch(database.pool, {
      sessionId,
      parentId: b,
      forkSeq: await seqOf(m1.id),
      baseSnapshotId: null,
    });
    await setActiveBranch(database.pool, sessionId, c);
    await say('c1');
    expect((await listMessages(database.pool, sessionId)).map((m) => m.content)).toEqual(['m1', 'c1']);

    await setActiveBranch(database.pool, sessionId, root);
    expect((await listHistoryMessages(database.pool, sessionId)).map((m) => m.content)).toEqual([
      'm1',
      'm2',
      'm3',
    ]);
  });
});
