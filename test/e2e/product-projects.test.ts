import { createQuillClient, QuillApiError } from '@quill/client';
import { appendMessage, createRun, createSession, finishRun, updateProjectWorkspace } from '@quill/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Call, newUser } from '../support/product-client.ts';
import { type Stack, startStack } from '../support/stack.ts';

// The gateway serves the product API; billing answers the one run a key starts (no router
// takes it). Other runs and messages are written as the router would.
let stack: Stack;
beforeAll(async () => {
  stack = await startStack({ replicas: { context: 0, router: 0, writer: 0, reviewer: 0 } });
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

describe('members', () => {
  it('invites by id or e-mail, changes roles, keeps the owner, lets a member leave', async () => {
    const owner = await newUser(stack, 'owner');
    const editor = await newUser(stack, 'editor');
    const viewer = await newUser(stack, 'viewer');
    const { id } = (await owner.call('POST', '/projects', { title: '合写' })).body.project;
    const base = `/projects/${id}/members`;
    const invited = await owner.call('POST', base, { user_id: editor.user.id, role: 'editor' });
    expect(invited).toMatchObject({
      status: 201,
      body: { member: { user_id: editor.user.id, role: 'editor' } },
    });
    const byEmail = await owner.call('POST', base, {
      email: viewer.user.email.toUpperCase(),
      role: 'viewer',
    });
    expect(byEmail.body.member).toMatchObject({ user_id: viewer.user.id, role: 'viewer' });
    expect(
      (await owner.call('POST', base, { user_id: viewer.user.id, role: 'editor' })).body.error.code,
    ).toBe('member_exists');
    expect((await owner.call('POST', base, { email: 'nobody@example.com', role: 'viewer' })).status).toBe(
      404,
    );
    expect((await owner.call('POST', base, { role: 'viewer' })).status).toBe(400);
    expect((await owner.call('POST', base, { user_id: viewer.user.id, role: 'owner' })).status).toBe(400);

    expect((await viewer.call('GET', `/projects/${id}`)).body.project.role).toBe('viewer');
    const listed = await editor.call('GET', base);
    expect(listed.body.members.map((member: { role: string }) => member.role)).toEqual([
      'owner',
      'editor',
      'viewer',
    ]);

    expect(
      (await owner.call('PATCH', `${base}/${viewer.user.id}`, { role: 'editor' })).body.member.role,
    ).toBe('editor');
    expect(
      (await viewer.call('PUT', `/projects/${id}/notes`, { notes: '可以写了', expected_version: 0 })).status,
    ).toBe(200);
    expect((await owner.call('PATCH', `${base}/${owner.user.id}`, { role: 'viewer' })).status).toBe(403);
    expect((await editor.call('DELETE', `${base}/${owner.user.id}`)).status).toBe(403);
    expect((await owner.call('DELETE', `${base}/${owner.user.id}`)).status).toBe(403);
    expect((await editor.call('DELETE', `${base}/${viewer.user.id}`)).status).toBe(403);

    expect((await viewer.call('DELETE', `${base}/${viewer.user.id}`)).status).toBe(204);
    expect((await viewer.call('GET', `/projects/${id}`)).status).toBe(404);
    expect((await owner.call('DELETE', `${base}/${editor.user.id}`)).status).toBe(204);
    expect((await owner.call('GET', base)).body.members).toHaveLength(1);
  });
});

describe('accounts and API keys', () => {
  it('lets an admin create users, and a user mint, list and revoke their own keys', async () => {
    const admin = await newUser(stack, 'admin', 'admin');
    const plain = await newUser(stack, 'plain');
    const email = `new-${crypto.randomUUID()}@example.com`;
    expect((await plain.call('POST', '/admin/users', { email, display_name: '新人' })).status).toBe(403);
    const created = await admin.call('POST', '/admin/users', { email, display_name: '新人' });
    expect(created).toMatchObject({
      status: 201,
      body: { user: { email, display_name: '新人', role: 'user' } },
    });
    expect((await admin.call('POST', '/admin/users', { email, display_name: 'again' })).body.error.code).toBe(
      'email_taken',
    );

    expect((await plain.call('GET', '/me')).body.user).toMatchObject({ id: plain.user.id, role: 'user' });
    const minted = await plain.call('POST', '/me/api-keys', { name: 'laptop' });
    expect(minted.status).toBe(201);
    const { secret, api_key: key } = minted.body;
    expect(secret).toMatch(/^qk_/);
    expect(key.prefix).toBe(secret.slice(0, 11));
    const asNewKey = await fetch(`${stack.gateways[0]}/api/v1/me`, {
      headers: { authorization: `Bearer ${secret}` },
    });
    expect(((await asNewKey.json()) as { user: { id: string } }).user.id).toBe(plain.user.id);

    const listed = (await plain.call('GET', '/me/api-keys')).body.api_keys;
    const entry = listed.find((row: { id: string }) => row.id === key.id);
    expect(entry).toMatchObject({
      name: 'laptop',
      prefix: key.prefix,
      revoked_at: null,
      last_used_at: expect.any(String),
    });
    expect(JSON.stringify(listed)).not.toContain(secret);
    expect(entry.usage).toEqual({ runs: 0, charged_runs: 0, total_tokens: 0, today_tokens: 0 });

    // A run started with the key counts toward the key, with the tokens its model calls used.
    const { id: projectId } = (await plain.call('POST', '/projects', { title: '计量' })).body.project;
    const started = await fetch(`${stack.gateways[0]}/api/v1/agent/stream`, {
      method: 'POST',
      headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
      body: JSON.stringify({ project_id: projectId, message: '开头' }),
    });
    expect(started.status).toBe(200);
    const runId = started.headers.get('x-quill-run-id')!;
    await started.body?.cancel();
    await stack.pool.query(`UPDATE runs SET billing_decision = 'charge' WHERE run_id = $1`, [runId]);
    for (const [callIndex, tokens, daysAgo] of [
      [0, 120, 0],
      [1, 30, 2],
    ] as const) {
      await stack.pool.query(
        `INSERT INTO usage_records (run_id, user_id, call_index, attempt, role, provider, model, prompt_tokens,
           completion_tokens, total_tokens, usage_source, created_at)
         VALUES ($1, $2, $3, 0, 'writer', 'primary', 'm', 0, $4, $4, 'provider', now() - make_interval(days => $5))`,
        [runId, plain.user.id, callIndex, tokens, daysAgo],
      );
    }
    const metered = (await plain.call('GET', '/me/api-keys')).body.api_keys;
    expect(metered.find((row: { id: string }) => row.id === key.id).usage).toEqual({
      runs: 1,
      charged_runs: 1,
      total_tokens: 150,
      today_tokens: 120,
    });
    expect(metered.find((row: { id: string }) => row.id !== key.id).usage.runs).toBe(0);

    expect((await admin.call('DELETE', `/me/api-keys/${key.id}`)).status).toBe(404);
    expect((await plain.call('DELETE', `/me/api-keys/${key.id}`)).status).toBe(204);
    expect((await plain.call('DELETE', `/me/api-keys/${key.id}`)).status).toBe(404);
    const revoked = await fetch(`${stack.gateways[0]}/api/v1/me`, {
      headers: { authorization: `Bearer ${secret}` },
    });
    expect(revoked.status).toBe(401);
  });
});

describe('typed client (@quill/client)', () => {
  it('drives projects, notes, members, keys and a zip round trip with the route schemas', async () => {
    const author = await newUser(stack, 'client');
    const invitee = await newUser(stack, 'client-invitee');
    const client = createQuillClient({ baseUrl: stack.gateways[0]!, token: author.key });
    const { project } = await client.projects.create({ title: '客户端', language: 'en' });
    expect(project).toMatchObject({ role: 'owner', language: 'en', project_type: 'novel' });
    expect((await client.projects.list({ limit: 1 })).projects.map((row) => row.id)).toEqual([project.id]);
    const notes = await client.projects.saveNotes(project.id, '记住', 0);
    expect(notes).toEqual({ notes: '记住', version: 1 });
    const conflict = await client.projects.saveNotes(project.id, '旧', 0).catch((error: unknown) => error);
    expect(conflict).toBeInstanceOf(QuillApiError);
    expect((conflict as QuillApiError).code).toBe('version_conflict');
    await client.projects.addMember(project.id, { email: invitee.user.email, role: 'viewer' });
    expect((await client.projects.members(project.id)).members).toHaveLength(2);
    const imported = await client.projects.import(await client.projects.export(project.id));
    expect(imported.project).toMatchObject({ title: '客户端', language: 'en' });
    expect(await client.projects.manuscript(project.id)).toBe('# 客户端\n');
    const { secret, api_key } = await client.me.createApiKey('ci');
    expect((await client.me.apiKeys()).api_keys.map((key) => key.id)).toContain(api_key.id);
    await client.me.revokeApiKey(api_key.id);
    const revoked = createQuillClient({ baseUrl: stack.gateways[0]!, token: secret });
    expect(await revoked.me.get().catch((error: QuillApiError) => error.status)).toBe(401);
    await client.projects.delete(project.id);
    expect((await client.projects.restore(project.id)).project.id).toBe(project.id);
  });
});
