import { appendMessage, createSession } from '@quill/db/gateway';
import { createRun, finishRun, startRun } from '@quill/db/router';
import { updateProjectWorkspace } from '@quill/db/workers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Call, newUser } from '../support/product-client.ts';
import { type Stack, startStack } from '../support/stack.ts';

// Only the gateway serves the product API; runs and messages are written as the router would.
let stack: Stack;
beforeAll(async () => {
  stack = await startStack({ replicas: { context: 0, billing: 0, router: 0, writer: 0, reviewer: 0 } });
});
afterAll(async () => {
  await stack?.stop();
});

async function allPages(call: Call, path: string, key: string, limit: number) {
  const items: Array<Record<string, unknown>> = [];
  let cursor: string | null = null;
  for (let pages = 0; pages < 50; pages++) {
    const separator = path.includes('?') ? '&' : '?';
    const reply = await call('GET', `${path}${separator}limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`);
    expect(reply.status).toBe(200);
    expect(reply.body[key].length).toBeLessThanOrEqual(limit);
    items.push(...reply.body[key]);
    cursor = reply.body.next_cursor;
    if (cursor === null) return items;
  }
  throw new Error('pagination did not end');
}

describe('projects', () => {
  it('creates, lists by pages, renames, archives, deletes and restores a project', async () => {
    const author = await newUser(stack, 'author');
    const created = await author.call('POST', '/projects', { title: '  雨夜  ', language: 'en' });
    expect(created.status).toBe(201);
    expect(created.body.project).toMatchObject({
      title: '雨夜',
      project_type: 'novel',
      language: 'en',
      role: 'owner',
      archived: false,
    });
    const id = created.body.project.id;
    for (const title of ['二', '三', '四', '五'])
      await author.call('POST', '/projects', { title, project_type: 'script' });

    const listed = await allPages(author.call, '/projects', 'projects', 2);
    expect(listed.map((project) => project.title)).toEqual(['五', '四', '三', '二', '雨夜']);

    const renamed = await author.call('PATCH', `/projects/${id}`, {
      title: '雨夜 · 新',
      project_type: 'short_story',
    });
    expect(renamed.body.project).toMatchObject({ title: '雨夜 · 新', project_type: 'short_story' });
    expect((await author.call('GET', `/projects/${id}`)).body.project.title).toBe('雨夜 · 新');

    expect((await author.call('PATCH', `/projects/${id}`, { archived: true })).body.project.archived).toBe(
      true,
    );
    const active = await author.call('GET', '/projects?limit=100');
    expect(active.body.projects.map((project: { id: string }) => project.id)).not.toContain(id);
    const archived = await author.call('GET', '/projects?archived=true');
    expect(archived.body.projects.map((project: { id: string }) => project.id)).toEqual([id]);

    expect((await author.call('DELETE', `/projects/${id}`)).status).toBe(204);
    expect((await author.call('GET', `/projects/${id}`)).status).toBe(404);
    expect((await author.call('GET', `/projects/${id}/files`)).status).toBe(404);
    expect((await author.call('GET', '/projects?archived=true')).body.projects).toEqual([]);
    const restored = await author.call('POST', `/projects/${id}/restore`);
    expect(restored).toMatchObject({ status: 200, body: { project: { id, archived: true } } });
    expect((await author.call('GET', `/projects/${id}`)).status).toBe(200);

    // Past the restore period the project is gone for good.
    await author.call('DELETE', `/projects/${id}`);
    await stack.pool.query(`UPDATE projects SET deleted_at = now() - interval '31 days' WHERE id = $1`, [id]);
    expect((await author.call('POST', `/projects/${id}/restore`)).status).toBe(404);
  });

  it('refuses bad input with the fields named, and a forged cursor', async () => {
    const author = await newUser(stack, 'bad-input');
    const bad = await author.call('POST', '/projects', {
      title: 'a\u0000b',
      project_type: 'poem',
      language: 'fr',
    });
    expect(bad.status).toBe(400);
    expect(Object.keys(bad.body.error.fields).sort()).toEqual(['language', 'project_type', 'title']);
    expect(
      (await author.call('POST', '/projects', { title: 'x', extra: 1 })).body.error.fields,
    ).toHaveProperty('extra');
    expect((await author.call('PATCH', `/projects/${stack.projectId}`, {})).status).toBe(400);
    // Someone else's project: 404, never 403.
    expect((await author.call('PATCH', `/projects/${stack.projectId}`, { title: 'x' })).status).toBe(404);
    const forged = await author.call(
      'GET',
      `/projects?cursor=${Buffer.from('{"at":1}').toString('base64url')}`,
    );
    expect(forged).toMatchObject({ status: 400, body: { error: { fields: { cursor: expect.any(Array) } } } });
    expect((await author.call('GET', '/projects?limit=101')).status).toBe(400);
  });
});

describe('project notes', () => {
  it('commits with rev: a stale save merges when disjoint, else 409 with the notes that stand', async () => {
    const author = await newUser(stack, 'notes-rev');
    const { id } = (await author.call('POST', '/projects', { title: '笔记合并' })).body.project;
    const put = (notes: string, expected_version: number) =>
      author.call('PUT', `/projects/${id}/notes`, { notes, expected_version });
    expect((await put('人物：林雨\n地点：旧书店\n时间：雨夜', 0)).body.version).toBe(1);
    // A second editor tab (still at rev 1) changes the first line.
    expect((await put('人物：林雨（店主）\n地点：旧书店\n时间：雨夜', 1)).body.version).toBe(2);
    // The first tab, also at rev 1, changes the last line: merged, nothing lost.
    const merged = await put('人物：林雨\n地点：旧书店\n时间：深秋雨夜', 1);
    expect(merged).toMatchObject({
      status: 200,
      body: { notes: '人物：林雨（店主）\n地点：旧书店\n时间：深秋雨夜', version: 3 },
    });
    // At rev 1 again, the line the other tab changed: refused with what stands now.
    const refused = await put('人物：陈默\n地点：旧书店\n时间：雨夜', 1);
    expect(refused).toMatchObject({
      status: 409,
      body: {
        error: { code: 'version_conflict' },
        current: { notes: '人物：林雨（店主）\n地点：旧书店\n时间：深秋雨夜', version: 3 },
      },
    });
    expect((await author.call('GET', `/projects/${id}/notes`)).body.version).toBe(3);
  });

  it('saves with a version check, and an agent update in between makes a stale save 409', async () => {
    const author = await newUser(stack, 'notes');
    const { id } = (await author.call('POST', '/projects', { title: '笔记' })).body.project;
    expect((await author.call('GET', `/projects/${id}/notes`)).body).toEqual({ notes: '', version: 0 });
    const saved = await author.call('PUT', `/projects/${id}/notes`, {
      notes: '【作者确认】\n主角叫林雨。',
      expected_version: 0,
    });
    expect(saved.body).toEqual({ notes: '【作者确认】\n主角叫林雨。', version: 1 });

    // What update_project does to the notes (libs/tools update-project.ts) bumps the version too.
    await updateProjectWorkspace(stack.pool, id, {
      notes: '【作者确认】\n主角叫林雨。\n\n【AI 提议】\n加一场雨。',
    });
    const stale = await author.call('PUT', `/projects/${id}/notes`, { notes: '覆盖', expected_version: 1 });
    expect(stale).toMatchObject({ status: 409, body: { error: { code: 'version_conflict' } } });
    const current = await author.call('GET', `/projects/${id}/notes`);
    expect(current.body).toEqual({
      notes: '【作者确认】\n主角叫林雨。\n\n【AI 提议】\n加一场雨。',
      version: 2,
    });
    // An agent update that changes nothing is no new version.
    await updateProjectWorkspace(stack.pool, id, { info: { genre: '悬疑' } });
    expect((await author.call('GET', `/projects/${id}/notes`)).body.version).toBe(2);
    const tooLong = await author.call('PUT', `/projects/${id}/notes`, {
      notes: 'x'.repeat(4001),
      expected_version: 2,
    });
    expect(tooLong.status).toBe(400);
  });
});

describe('sessions and history', () => {
  it('lists sessions by activity, reads messages in order with their run, renames and deletes', async () => {
    const author = await newUser(stack, 'history');
    const { id: projectId } = (await author.call('POST', '/projects', { title: '历史' })).body.project;
    const older = await createSession(stack.pool, { projectId, userId: author.user.id, title: '旧的' });
    const session = await createSession(stack.pool, { projectId, userId: author.user.id, title: '第一章' });
    const runId = crypto.randomUUID();
    await createRun(stack.pool, {
      runId,
      sessionId: session.sessionId,
      projectId,
      userId: author.user.id,
      generationMode: 'fast',
    });
    await startRun(stack.pool, runId);
    await appendMessage(stack.pool, {
      sessionId: session.sessionId,
      runId,
      role: 'user',
      content: '写第一章',
    });
    await finishRun(stack.pool, runId, { phase: 'done', stopReason: 'completed', billingDecision: 'charge' });
    await appendMessage(stack.pool, {
      sessionId: session.sessionId,
      runId,
      role: 'assistant',
      content: '写好了。',
      breadcrumbs: {
        v: 1,
        created: [{ file_id: 'f1', title: '第一章' }],
        edited: [],
        deleted: [],
        read: [{ file_id: 'f0', title: '大纲' }],
      },
    });
    const failedRun = crypto.randomUUID();
    await createRun(stack.pool, {
      runId: failedRun,
      sessionId: session.sessionId,
      projectId,
      userId: author.user.id,
      generationMode: 'fast',
    });
    await startRun(stack.pool, failedRun);
    await appendMessage(stack.pool, {
      sessionId: session.sessionId,
      runId: failedRun,
      role: 'user',
      content: '继续',
    });
    await finishRun(stack.pool, failedRun, { phase: 'error', errorCode: 'model_error' });

    const sessions = await allPages(author.call, `/projects/${projectId}/sessions`, 'sessions', 1);
    expect(sessions.map((row) => row.session_id)).toEqual([session.sessionId, older.sessionId]);
    expect(sessions[0]).toMatchObject({
      title: '第一章',
      phase: 'idle',
      last_activity_at: expect.any(String),
    });

    const messages = await allPages(author.call, `/sessions/${session.sessionId}/messages`, 'messages', 2);
    expect(messages.map((message) => [message.role, message.content])).toEqual([
      ['user', '写第一章'],
      ['assistant', '写好了。'],
      ['user', '继续'],
    ]);
    expect(messages[1]).toMatchObject({
      run_id: runId,
      run: { phase: 'done', stop_reason: 'completed', terminal: 'workflow_complete', error_code: null },
      file_operations: [
        { op: 'created', file_id: 'f1', title: '第一章' },
        { op: 'read', file_id: 'f0', title: '大纲' },
      ],
    });
    expect(messages[2]).toMatchObject({
      run: { terminal: 'error', error_code: 'model_error' },
      file_operations: [],
    });

    const runs = await allPages(author.call, `/sessions/${session.sessionId}/runs`, 'runs', 1);
    expect(runs.map((run) => [run.run_id, run.billing_decision, run.terminal])).toEqual([
      [runId, 'charge', 'workflow_complete'],
      [failedRun, null, 'error'],
    ]);

    const renamed = await author.call('PATCH', `/sessions/${session.sessionId}`, { title: '第一章 · 雨夜' });
    expect(renamed.body.session).toMatchObject({ session_id: session.sessionId, title: '第一章 · 雨夜' });
    const read = await author.call('GET', `/sessions/${session.sessionId}`);
    expect(read.body).toMatchObject({ phase: 'idle', session: { title: '第一章 · 雨夜', phase: 'idle' } });

    const busyRun = crypto.randomUUID();
    await createRun(stack.pool, {
      runId: busyRun,
      sessionId: older.sessionId,
      projectId,
      userId: author.user.id,
      generationMode: 'fast',
    });
    await startRun(stack.pool, busyRun);
    expect((await author.call('DELETE', `/sessions/${older.sessionId}`)).body.error.code).toBe(
      'session_busy',
    );
    expect((await author.call('DELETE', `/sessions/${session.sessionId}`)).status).toBe(204);
    expect((await author.call('GET', `/sessions/${session.sessionId}/messages`)).status).toBe(404);
    const left = await author.call('GET', `/projects/${projectId}/sessions`);
    expect(left.body.sessions.map((row: { session_id: string }) => row.session_id)).toEqual([
      older.sessionId,
    ]);
  });
});
