import { getFile, listFiles, listFileVersions } from '@quill/db';
import { createFile } from '@quill/db/gateway';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getJson, postJson } from '../support/api.ts';
import { frameTypes, readStream, startRun } from '../support/sse-client.ts';
import { type Stack, startStack } from '../support/stack.ts';

/**
 * Snapshots and undo end to end (README "Snapshots, undo and branches"): real gateway, router,
 * workers, context and billing; only the model is the fake LLM, scripted per test.
 */
let stack: Stack;

beforeAll(async () => {
  stack = await startStack();
});
afterAll(async () => {
  await stack?.stop();
});

const BODY = '雨落在旧书店的玻璃上，店主把灯调暗了一格。';
const P = () => `/projects/${stack.projectId}`;

async function run(message: string, sessionId?: string): Promise<{ runId: string; sessionId: string }> {
  const response = await startRun(stack.gateways[0]!, stack.apiKey, {
    project_id: stack.projectId,
    message,
    ...(sessionId ? { session_id: sessionId } : {}),
  });
  const result = await readStream(response);
  expect(frameTypes(result).at(-1)).toBe('done');
  const started = result.frames[0]!.frame;
  if (started.type !== 'run_started') throw new Error('first frame must be run_started');
  return { runId: started.run_id, sessionId: started.session_id };
}

const post = (path: string, body: unknown = {}) => postJson(stack.gateways[0]!, path, stack.apiKey, body);
const get = (path: string) => getJson(stack.gateways[0]!, path, stack.apiKey);
async function put(path: string, body: unknown) {
  const response = await fetch(`${stack.gateways[0]}/api/v1${path}`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${stack.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: await response.json() };
}

/** A file the agent wrote earlier (an AI version, so a run may rewrite and rename it). */
async function aiFile(title: string, content: string) {
  return createFile(stack.pool, {
    projectId: stack.projectId,
    title,
    fileType: 'draft',
    content,
    source: 'ai',
  });
}

/** One writer turn that creates `newTitle`, writes its body, and renames `renameId`. */
function scriptCreateAndRename(newTitle: string, renameId: string, renamedTo: string) {
  return stack.fakeLlm.addScript({
    match: { role: 'writer' },
    responses: [
      {
        text: '',
        tool_calls: [
          { name: 'rename_file', arguments: { id: renameId, new_title: renamedTo } },
          { name: 'create_file', arguments: { title: newTitle, file_type: 'draft' } },
        ],
      },
      { text: `<file>\n${BODY}\n</file>\n写好了。` },
    ],
  });
}

/** One writer turn that rewrites an existing file (create_file reuses the same-name file). */
function scriptRewrite(title: string, body: string) {
  return stack.fakeLlm.addScript({
    match: { role: 'writer' },
    responses: [
      { text: '', tool_calls: [{ name: 'create_file', arguments: { title, file_type: 'draft' } }] },
      { text: `<file>\n${body}\n</file>\n改好了。` },
    ],
  });
}

const liveTitle = async (title: string) =>
  (await listFiles(stack.pool, stack.projectId)).find((file) => file.title === title);

describe('undo a run', () => {
  it('puts back every file the run created, changed or renamed, as new author versions', async () => {
    const renamed = await aiFile('人物表-undo', '店主：五十岁。');
    const rewritten = await aiFile('第一章-undo', '初稿。');
    await scriptCreateAndRename('第二章-undo', renamed.id, '人物小传-undo');
    const first = await run('写第二章，并把人物表改名');
    await scriptRewrite('第一章-undo', BODY);
    const second = await run('重写第一章', first.sessionId);

    const created = await liveTitle('第二章-undo');
    expect(created?.content).toBe(BODY);
    expect((await getFile(stack.pool, stack.projectId, renamed.id))?.title).toBe('人物小传-undo');
    expect(await getFile(stack.pool, stack.projectId, rewritten.id)).toMatchObject({
      content: BODY,
      version: 2,
    });

    // Undo the newer run first: the chapter's text comes back as version 3, an author version.
    const undoSecond = await post(`/agent/runs/${second.runId}/undo`);
    expect(undoSecond.status).toBe(200);
    expect(undoSecond.body.files).toEqual([
      { file_id: rewritten.id, title: '第一章-undo', action: 'reverted', version: 3 },
    ]);
    expect(await getFile(stack.pool, stack.projectId, rewritten.id)).toMatchObject({
      content: '初稿。',
      version: 3,
    });
    expect(
      (await listFileVersions(stack.pool, rewritten.id)).map((version) => [version.version, version.source]),
    ).toEqual([
      [3, 'author'],
      [2, 'ai'],
      [1, 'ai'],
    ]);

    // Then the first: the file it created goes away (its history stays), the rename is reversed.
    const undoFirst = await post(`/agent/runs/${first.runId}/undo`);
    expect(undoFirst.status).toBe(200);
    expect(undoFirst.body.files).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ file_id: created!.id, action: 'deleted' }),
        expect.objectContaining({ file_id: renamed.id, title: '人物表-undo', action: 'renamed' }),
      ]),
    );
    expect(await liveTitle('第二章-undo')).toBeUndefined();
    expect((await listFileVersions(stack.pool, created!.id))[0]?.content).toBe(BODY);
    expect(await getFile(stack.pool, stack.projectId, renamed.id)).toMatchObject({
      title: '人物表-undo',
      content: '店主：五十岁。',
    });
    // The state before each undo was kept as a snapshot, so an undo can itself be restored.
    expect(undoFirst.body.before_snapshot_id).toEqual(expect.any(String));
    const again = await post(`/agent/runs/${first.runId}/undo`);
    expect(again.body.files).toEqual([]);
  });

  it('refuses with 409 and the conflicts when the author edited a file after the run; force keeps every version', async () => {
    const chapter = await aiFile('第三章-undo', '原稿。');
    await scriptRewrite('第三章-undo', BODY);
    const { runId } = await run('重写第三章');
    const saved = await put(`${P()}/files/${chapter.id}`, {
      content: '作者改过的第三章。',
      expected_version: 2,
    });
    expect(saved.status).toBe(200);

    const refused = await post(`/agent/runs/${runId}/undo`);
    expect(refused.status).toBe(409);
    expect(refused.body.error).toMatchObject({
      code: 'restore_conflict',
      conflicts: [{ file_id: chapter.id, title: '第三章-undo', changed_by: 'author', run_id: null }],
    });
    expect(await getFile(stack.pool, stack.projectId, chapter.id)).toMatchObject({
      content: '作者改过的第三章。',
      version: 3,
    });

    const forced = await post(`/agent/runs/${runId}/undo`, { force: true });
    expect(forced.status).toBe(200);
    expect(await getFile(stack.pool, stack.projectId, chapter.id)).toMatchObject({
      content: '原稿。',
      version: 4,
    });
    const history = await listFileVersions(stack.pool, chapter.id);
    expect(history.map((version) => [version.version, version.source, version.content])).toEqual([
      [4, 'author', '原稿。'],
      [3, 'author', '作者改过的第三章。'],
      [2, 'ai', BODY],
      [1, 'ai', '原稿。'],
    ]);
  });

  it('answers 404 for an unknown run and 400 for a bad body', async () => {
    expect((await post('/agent/runs/00000000-0000-4000-8000-000000000000/undo')).status).toBe(404);
    const bad = await post('/agent/runs/00000000-0000-4000-8000-000000000000/undo', { force: 'yes' });
    expect(bad.status).toBe(400);
    expect(bad.body.error.fields.force).toBeDefined();
  });
});

describe('manual snapshots', () => {
  it('are taken, listed, diffed per file with a text diff, and restored (conflicts, then force)', async () => {
    const outline = await createFile(stack.pool, {
      projectId: stack.projectId,
      title: '大纲-snap',
      fileType: 'outline',
      content: '第一幕：雨夜。\n第二幕：旧信。',
    });
    const taken = await post(`${P()}/snapshots`, { label: '改大纲之前' });
    expect(taken.status).toBe(201);
    const snapshotId = taken.body.snapshot.id as string;
    expect(taken.body.snapshot.file_list).toEqual(
      expect.arrayContaining([{ id: outline.id, version: 1, title: '大纲-snap', folder: '' }]),
    );

    expect(
      (
        await put(`${P()}/files/${outline.id}`, {
          content: '第一幕：雨夜。\n第二幕：灯塔。',
          expected_version: 1,
        })
      ).status,
    ).toBe(200);
    const added = await post(`${P()}/files`, {
      title: '灯塔-snap',
      file_type: 'setting',
      content: '海边的灯塔。',
    });
    expect(added.status).toBe(201);

    const listed = await get(`${P()}/snapshots?limit=100`);
    expect(listed.status).toBe(200);
    expect(listed.body.snapshots.map((snapshot: { id: string }) => snapshot.id)).toContain(snapshotId);
    expect(listed.body.snapshots[0]).toMatchObject({ id: snapshotId, label: '改大纲之前', kind: 'manual' });

    const diff = await get(`${P()}/snapshots/${snapshotId}/diff`);
    expect(diff.status).toBe(200);
    expect(diff.body.files).toEqual(
      expect.arrayContaining([
        {
          file_id: outline.id,
          title: '大纲-snap',
          status: 'changed',
          from_version: 1,
          to_version: 2,
          renamed: false,
        },
        {
          file_id: added.body.file.id,
          title: '灯塔-snap',
          status: 'added',
          from_version: null,
          to_version: 1,
          renamed: false,
        },
      ]),
    );
    const text = await get(`${P()}/snapshots/${snapshotId}/diff?file_id=${outline.id}`);
    expect(text.body.text_diff).toContain('-第二幕：旧信。');
    expect(text.body.text_diff).toContain('+第二幕：灯塔。');

    const refused = await post(`${P()}/snapshots/${snapshotId}/restore`);
    expect(refused.status).toBe(409);
    expect(refused.body.error.code).toBe('restore_conflict');
    expect(
      refused.body.error.conflicts.map((conflict: { file_id: string }) => conflict.file_id).sort(),
    ).toEqual([outline.id, added.body.file.id].sort());

    const restored = await post(`${P()}/snapshots/${snapshotId}/restore`, { force: true });
    expect(restored.status).toBe(200);
    expect(await getFile(stack.pool, stack.projectId, outline.id)).toMatchObject({
      content: '第一幕：雨夜。\n第二幕：旧信。',
      version: 3,
    });
    expect(await getFile(stack.pool, stack.projectId, added.body.file.id)).toBeNull();
    // The restore itself is reversible: the state it replaced is a snapshot too.
    const before = await get(
      `${P()}/snapshots/${restored.body.before_snapshot_id}/diff?against=${snapshotId}`,
    );
    expect(before.body.files).toEqual(
      expect.arrayContaining([expect.objectContaining({ file_id: added.body.file.id, status: 'removed' })]),
    );
    const nowDiff = await get(`${P()}/snapshots/${snapshotId}/diff`);
    expect(nowDiff.body.files.filter((file: { file_id: string }) => file.file_id === outline.id)).toEqual([
      expect.objectContaining({ status: 'changed', from_version: 1, to_version: 3 }),
    ]);
  });

  it('restores over what runs wrote since without asking (only the author’s own edits are conflicts)', async () => {
    const taken = await post(`${P()}/snapshots`, { label: '跑之前' });
    await scriptRewrite('第九章-snap', BODY);
    await run('写第九章');
    expect((await liveTitle('第九章-snap'))?.content).toBe(BODY);
    const restored = await post(`${P()}/snapshots/${taken.body.snapshot.id}/restore`);
    expect(restored.status).toBe(200);
    expect(await liveTitle('第九章-snap')).toBeUndefined();
  });

  it('answers 404 for an unknown snapshot and 400 naming a bad query field (roles: product-acl.test.ts)', async () => {
    const unknown = await get(`${P()}/snapshots/00000000-0000-4000-8000-000000000000`);
    expect(unknown.status).toBe(404);
    const bad = await get(`${P()}/snapshots/00000000-0000-4000-8000-000000000000/diff?against=yesterday`);
    expect(bad.status).toBe(400);
    expect(bad.body.error.fields.against).toBeDefined();
  });
});
