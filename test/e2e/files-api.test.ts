import { addProjectMember, createApiKey, createUser } from '@quill/db/gateway';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Stack, startStack } from '../support/stack.ts';

// Only the gateway serves the file API; the other services are not needed here.
let stack: Stack;
beforeAll(async () => {
  stack = await startStack({ replicas: { context: 0, billing: 0, router: 0, writer: 0, reviewer: 0 } });
});
afterAll(async () => {
  await stack?.stop();
});

/** The response fields these tests read (each response has the ones its route returns). */
interface ApiBody {
  file: { id: string; content?: string } & Record<string, unknown>;
  files: Array<{ id: string } & Record<string, unknown>>;
  versions: Array<{ version: number; source: string }>;
  error: { code: string; fields: Record<string, string[]> };
}

function api(key: string) {
  return async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${stack.gateways[0]}/api/v1${path}`, {
      method,
      headers: {
        authorization: `Bearer ${key}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    return { status: response.status, body: text ? (JSON.parse(text) as ApiBody) : undefined };
  };
}

async function userWithKey(email: string) {
  const user = await createUser(stack.pool, { email, displayName: email });
  return { user, call: api((await createApiKey(stack.pool, user.id, 'test')).key) };
}

describe('file API: versions, optimistic saves and revert', () => {
  it('creates, saves author versions, refuses a stale save with 409 and reverts as a new version', async () => {
    const owner = api(stack.apiKey);
    const base = `/projects/${stack.projectId}/files`;
    const created = await owner('POST', base, { title: '第一章', file_type: 'draft', content: '初稿。' });
    expect(created.status).toBe(201);
    const file = created.body!.file;
    expect(file).toMatchObject({ title: '第一章', version: 1, author_saved: true, content: '初稿。' });
    const path = `${base}/${file.id}`;

    const saved = await owner('PUT', path, { content: '二稿。', expected_version: 1 });
    expect(saved).toMatchObject({ status: 200, body: { file: { version: 2, content: '二稿。' } } });
    const stale = await owner('PUT', path, { content: '基于旧版本的修改', expected_version: 1 });
    expect(stale).toMatchObject({ status: 409, body: { error: { code: 'version_conflict' } } });

    const reverted = await owner('POST', `${path}/revert`, { version: 1 });
    expect(reverted).toMatchObject({
      status: 200,
      body: { file: { version: 3, content: '初稿。' }, reverted_to: 1 },
    });
    const versions = await owner('GET', `${path}/versions`);
    expect(
      versions.body!.versions.map((row: { version: number; source: string }) => [row.version, row.source]),
    ).toEqual([
      [3, 'author'],
      [2, 'author'],
      [1, 'author'],
    ]);
    expect((await owner('POST', `${path}/revert`, { version: 9 })).status).toBe(404);
    expect((await owner('POST', `${path}/revert`, { version: 1, expected_version: 2 })).status).toBe(409);

    const listed = await owner('GET', base);
    const entry = listed.body!.files.find((row: { id: string }) => row.id === file.id);
    expect(entry).toMatchObject({ title: '第一章', version: 3, chars: 3 });
    expect(entry).not.toHaveProperty('content');

    const renamed = await owner('PUT', path, {
      content: '三稿。',
      expected_version: 3,
      title: '第一章 雨夜',
    });
    expect(renamed.body!.file).toMatchObject({ title: '第一章 雨夜', version: 4 });

    expect((await owner('DELETE', path)).status).toBe(204);
    expect((await owner('GET', path)).status).toBe(404);
  });

  it('names the bad fields of an invalid body', async () => {
    const owner = api(stack.apiKey);
    const result = await owner('POST', `/projects/${stack.projectId}/files`, {
      title: '',
      file_type: 'Draft!',
    });
    expect(result.status).toBe(400);
    expect(Object.keys(result.body!.error.fields).sort()).toEqual(['file_type', 'title']);
  });
});

describe('file API: project ACL', () => {
  it('hides the project from non-members (404) and lets viewers read but not write (403)', async () => {
    const owner = api(stack.apiKey);
    const base = `/projects/${stack.projectId}/files`;
    const file = (await owner('POST', base, { title: '设定', file_type: 'setting', content: '江南小镇。' }))
      .body!.file;
    const path = `${base}/${file.id}`;

    const stranger = await userWithKey(`stranger-${crypto.randomUUID()}@example.com`);
    expect((await stranger.call('GET', base)).status).toBe(404);
    expect((await stranger.call('GET', path)).status).toBe(404);
    expect((await stranger.call('PUT', path, { content: 'x', expected_version: 1 })).status).toBe(404);

    const viewer = await userWithKey(`viewer-${crypto.randomUUID()}@example.com`);
    await addProjectMember(stack.pool, stack.projectId, viewer.user.id, 'viewer');
    expect((await viewer.call('GET', path)).body!.file.content).toBe('江南小镇。');
    expect((await viewer.call('GET', `${path}/versions`)).status).toBe(200);
    for (const [method, target, body] of [
      ['PUT', path, { content: 'x', expected_version: 1 }],
      ['POST', `${path}/revert`, { version: 1 }],
      ['POST', base, { title: 'x', file_type: 'note' }],
      ['DELETE', path, undefined],
    ] as const) {
      const result = await viewer.call(method, target, body);
      expect(result, `${method} ${target}`).toMatchObject({
        status: 403,
        body: { error: { code: 'forbidden' } },
      });
    }

    const editor = await userWithKey(`editor-${crypto.randomUUID()}@example.com`);
    await addProjectMember(stack.pool, stack.projectId, editor.user.id, 'editor');
    expect((await editor.call('PUT', path, { content: '江南水乡。', expected_version: 1 })).status).toBe(200);
  });
});
