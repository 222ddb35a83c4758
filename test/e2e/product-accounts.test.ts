import { createQuillClient, QuillApiError } from '@quill/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newUser } from '../support/product-client.ts';
import { type Stack, startStack } from '../support/stack.ts';

// The gateway serves the product API; billing answers the one run a key starts (no router
// takes it).
let stack: Stack;
beforeAll(async () => {
  // A launch needs a router to open the run (docs/architecture.md "What each service owns"); with
  // no context service the writer's compile request finds no one and the run ends with an error,
  // which is all these tests need of it: no model is called. The router's own model decision is
  // off, so the only usage rows are the ones these tests add. The writer asks for its compile until
  // the request deadline (a context replica may be starting), shortened here.
  stack = await startStack({
    replicas: { context: 0, router: 1, writer: 1, reviewer: 0 },
    env: { AGENT_ROUTER_STRATEGY: 'off', NATS_REQUEST_DEADLINE_MS: '3000' },
  });
});
afterAll(async () => {
  await stack?.stop();
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
    // Read to `done`, so the run's own ending is written before the test sets its decision.
    expect(await started.text()).toContain('event: done');
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
