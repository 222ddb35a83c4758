import { addProjectMember, createFile, setFileVisibility } from '@quill/db/gateway';
import { updateProjectWorkspace } from '@quill/db/workers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildZip } from '../../services/gateway/test/zip-builder.ts';
import { type Call, newUser } from '../support/product-client.ts';
import { type Stack, startStack } from '../support/stack.ts';

let stack: Stack;
beforeAll(async () => {
  stack = await startStack({ replicas: { context: 0, billing: 0, router: 0, writer: 0, reviewer: 0 } });
});
afterAll(async () => {
  await stack?.stop();
});

async function download(key: string, path: string) {
  const response = await fetch(`${stack.gateways[0]}/api/v1${path}`, {
    headers: { authorization: `Bearer ${key}` },
  });
  return {
    status: response.status,
    type: response.headers.get('content-type'),
    bytes: Buffer.from(await response.arrayBuffer()),
  };
}

async function upload(key: string, zip: Buffer) {
  const response = await fetch(`${stack.gateways[0]}/api/v1/projects/import`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/zip' },
    body: zip,
  });
  const body = (await response.json()) as {
    project: { id: string } & Record<string, unknown>;
    error: { fields: { zip: string[] } };
  };
  return { status: response.status, body };
}

async function filesOf(call: Call, projectId: string) {
  const listed = (await call('GET', `/projects/${projectId}/files`)).body.files as Array<{ id: string }>;
  return Promise.all(
    listed.map(async ({ id }) => {
      const { file } = (await call('GET', `/projects/${projectId}/files/${id}`)).body;
      return { title: file.title, folder: file.folder, file_type: file.file_type, content: file.content };
    }),
  );
}

describe('project export and import', () => {
  it('round-trips a project byte for byte: export → import → export', async () => {
    const author = await newUser(stack, 'exporter');
    const { id } = (
      await author.call('POST', '/projects', { title: '江南雨', project_type: 'novel', language: 'zh' })
    ).body.project;
    await author.call('PUT', `/projects/${id}/notes`, {
      notes: '【作者确认】\n林雨怕水。',
      expected_version: 0,
    });
    await updateProjectWorkspace(stack.pool, id, { info: { genre: '悬疑' } });
    const texts = [
      ['第二章 渡口', 'draft', '正文', '船来了。\n\n---\n不是 front matter。\n'],
      ['第一章 雨夜', 'draft', '正文', '雨下了一夜。'],
      ['林雨', 'character', '人物', '二十岁，怕水。  \n'],
      ['大纲: 全书', 'outline', '', ''],
    ] as const;
    for (const [title, fileType, folder, content] of texts)
      await createFile(stack.pool, { projectId: id, title, fileType, folder, content });
    const secret = await createFile(stack.pool, {
      projectId: id,
      title: '伏笔',
      fileType: 'note',
      content: '他是凶手。',
    });
    await setFileVisibility(stack.pool, id, secret.id, 'author_only');
    const chapterOne = (await author.call('GET', `/projects/${id}/files`)).body.files.find(
      (file: { title: string }) => file.title === '第一章 雨夜',
    );
    const draft = await createFile(stack.pool, {
      projectId: id,
      title: '第一章 雨夜（AI 草稿）',
      fileType: 'draft',
      content: '雨停了。',
    });
    await stack.pool.query('UPDATE files SET draft_of = $2 WHERE id = $1', [draft.id, chapterOne.id]);

    const first = await download(author.key, `/projects/${id}/export`);
    expect(first.status).toBe(200);
    expect(first.type).toBe('application/zip');
    const imported = await upload(author.key, first.bytes);
    expect(imported.status).toBe(201);
    const copy = imported.body.project;
    expect(copy).toMatchObject({ title: '江南雨', project_type: 'novel', language: 'zh', role: 'owner' });
    expect(copy.id).not.toBe(id);

    const second = await download(author.key, `/projects/${copy.id}/export`);
    expect(second.bytes.equals(first.bytes)).toBe(true);
    expect(await filesOf(author.call, copy.id)).toEqual(await filesOf(author.call, id));
    expect((await author.call('GET', `/projects/${copy.id}/notes`)).body.notes).toBe(
      '【作者确认】\n林雨怕水。',
    );
    const { rows } = await stack.pool.query(
      `SELECT f.visibility, p.info FROM files f JOIN projects p ON p.id = f.project_id
       WHERE f.project_id = $1 AND f.title = '伏笔'`,
      [copy.id],
    );
    expect(rows).toEqual([{ visibility: 'author_only', info: { genre: '悬疑' } }]);
    // The draft is still a draft of the copy's own chapter: accepting it works there too.
    const copied = (await author.call('GET', `/projects/${copy.id}/files`)).body.files as Array<{
      id: string;
      title: string;
      draft_of: string | null;
    }>;
    const copiedDraft = copied.find((file) => file.title === '第一章 雨夜（AI 草稿）')!;
    expect(copiedDraft.draft_of).toBe(copied.find((file) => file.title === '第一章 雨夜')!.id);
    const accepted = await author.call('POST', `/projects/${copy.id}/files/${copiedDraft.id}/accept-draft`, {
      expected_version: 1,
    });
    expect(accepted.body.file).toMatchObject({ title: '第一章 雨夜', content: '雨停了。' });

    // A changed project exports differently: the comparison above can fail.
    await createFile(stack.pool, { projectId: copy.id, title: '第三章', fileType: 'draft', content: '。' });
    expect((await download(author.key, `/projects/${copy.id}/export`)).bytes.equals(first.bytes)).toBe(false);
  });

  it('exports the manuscript in chapter order, to any member and to no one else', async () => {
    const author = await newUser(stack, 'manuscript');
    const viewer = await newUser(stack, 'manuscript-viewer');
    const stranger = await newUser(stack, 'manuscript-stranger');
    const { id } = (await author.call('POST', '/projects', { title: '书' })).body.project;
    await addProjectMember(stack.pool, id, viewer.user.id, 'viewer');
    for (const [title, fileType, content] of [
      ['第十章 终', 'draft', '十。'],
      ['第二章', 'draft', '二。\n'],
      ['第一章', 'draft', '一。'],
      ['人物表', 'character', '不在稿里。'],
    ] as const)
      await createFile(stack.pool, { projectId: id, title, fileType, content });
    const manuscript = await download(viewer.key, `/projects/${id}/manuscript.md`);
    expect(manuscript.status).toBe(200);
    expect(manuscript.type).toMatch(/^text\/markdown/);
    expect(manuscript.bytes.toString('utf8')).toBe(
      '# 书\n\n## 第一章\n\n一。\n\n## 第二章\n\n二。\n\n## 第十章 终\n\n十。\n',
    );
    expect((await download(stranger.key, `/projects/${id}/manuscript.md`)).status).toBe(404);
    expect((await download(stranger.key, `/projects/${id}/export`)).status).toBe(404);
  });

  it('refuses unsafe or malformed zips with the rule named, and stores nothing', async () => {
    const author = await newUser(stack, 'importer');
    const manifest = (files: Array<{ path: string; title: string }>) =>
      JSON.stringify({
        format: 'quill-project',
        version: 1,
        project: { title: '坏', project_type: 'novel', language: 'zh', notes: '', info: {} },
        files,
      });
    const good = '---\ntitle: 一\ntype: draft\nfolder: ""\norder: 0\n---\n正文';
    const cases: Array<[string, Buffer]> = [
      [
        'path_traversal',
        buildZip([
          { name: 'manifest.json', data: manifest([]) },
          { name: '../evil.md', data: good },
        ]),
      ],
      [
        'symlink',
        buildZip([
          { name: 'manifest.json', data: manifest([]) },
          { name: 'link.md', data: '/etc/passwd', mode: 0o120777 },
        ]),
      ],
      ['missing_manifest', buildZip([{ name: 'files/0001.md', data: good }])],
      [
        'unlisted_file',
        buildZip([
          { name: 'manifest.json', data: manifest([]) },
          { name: 'files/0001.md', data: good },
        ]),
      ],
      [
        'invalid_front_matter',
        buildZip([
          { name: 'manifest.json', data: manifest([{ path: 'files/0001.md', title: '一' }]) },
          { name: 'files/0001.md', data: good.replace('type: draft', 'type: "Bad Type"') },
        ]),
      ],
      ['invalid_manifest', buildZip([{ name: 'manifest.json', data: '{"format":"quill-project"}' }])],
      [
        'invalid_front_matter',
        buildZip([
          { name: 'manifest.json', data: manifest([{ path: 'files/0001.md', title: '一' }]) },
          { name: 'files/0001.md', data: good.replace('order: 0', 'order: 0\ndraft_of: 0') },
        ]),
      ],
      ['not_a_zip', Buffer.from('not a zip at all')],
    ];
    const before = await author.call('GET', '/projects');
    for (const [rule, zip] of cases) {
      const refused = await upload(author.key, zip);
      expect(refused.status, rule).toBe(400);
      expect(refused.body.error.fields.zip[0], rule).toMatch(new RegExp(`^${rule}: `));
    }
    expect((await author.call('GET', '/projects')).body.projects).toEqual(before.body.projects);

    const accepted = await upload(
      author.key,
      buildZip([
        { name: 'manifest.json', data: manifest([{ path: 'files/0001.md', title: '一' }]) },
        { name: 'files/0001.md', data: good, deflate: true },
      ]),
    );
    expect(accepted.status).toBe(201);
    expect(await filesOf(author.call, accepted.body.project.id)).toEqual([
      { title: '一', folder: '', file_type: 'draft', content: '正文' },
    ]);
  });
});
