import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testUrls } from '../../../test/support/urls.ts';
import { createFile, createProject, createUser, softDeleteFile } from '../src/gateway/index.ts';
import { getFile, listFiles, listFileVersions } from '../src/index.ts';
import { FileNotFoundError } from '../src/shared-tables/files.ts';
import { createTestDatabase, type TestDatabase } from '../src/testing.ts';
import { saveFileContent } from '../src/workers/index.ts';

let database: TestDatabase;
let projectId: string;
beforeAll(async () => {
  database = await createTestDatabase({ serverUrl: testUrls.database });
  const user = await createUser(database.pool, { email: 'files@example.com', displayName: 'Files' });
  projectId = (await createProject(database.pool, { ownerId: user.id, title: 'Files' })).id;
});
afterAll(async () => {
  await database.drop();
});

describe('files', () => {
  it('records a version row for every save and marks author saves', async () => {
    const file = await createFile(database.pool, { projectId, title: '第一章', fileType: 'draft' });
    expect(file).toMatchObject({ version: 0, content: '', authorSaved: false, folder: '', deleted: false });
    expect(await listFileVersions(database.pool, file.id)).toEqual([]);

    const runId = crypto.randomUUID();
    expect(
      await saveFileContent(database.pool, { fileId: file.id, content: 'AI 初稿', source: 'ai', runId }),
    ).toBe(1);
    expect(await getFile(database.pool, projectId, file.id)).toMatchObject({
      version: 1,
      authorSaved: false,
    });

    expect(
      await saveFileContent(database.pool, { fileId: file.id, content: '作者改稿', source: 'author' }),
    ).toBe(2);
    const saved = await getFile(database.pool, projectId, file.id);
    expect(saved).toMatchObject({ version: 2, content: '作者改稿', authorSaved: true });

    const versions = await listFileVersions(database.pool, file.id);
    expect(
      versions.map(({ version, content, source, runId: run }) => ({ version, content, source, run })),
    ).toEqual([
      { version: 2, content: '作者改稿', source: 'author', run: null },
      { version: 1, content: 'AI 初稿', source: 'ai', run: runId },
    ]);
  });

  it('starts a file created with content at version 1 with history', async () => {
    const file = await createFile(database.pool, {
      projectId,
      title: '人物：林晚',
      fileType: 'character',
      folder: '设定',
      content: '书店店主',
    });
    expect(file).toMatchObject({ version: 1, authorSaved: true, folder: '设定' });
    expect((await listFileVersions(database.pool, file.id)).map((row) => row.content)).toEqual(['书店店主']);
  });

  it('hides deleted files and refuses to save them', async () => {
    const file = await createFile(database.pool, { projectId, title: '废稿', fileType: 'note' });
    expect(await softDeleteFile(database.pool, projectId, file.id)).toBe(true);
    expect(await getFile(database.pool, projectId, file.id)).toBeNull();
    expect((await listFiles(database.pool, projectId)).map((row) => row.id)).not.toContain(file.id);
    await expect(
      saveFileContent(database.pool, { fileId: file.id, content: 'x', source: 'ai' }),
    ).rejects.toBeInstanceOf(FileNotFoundError);
  });

  it('does not serve a file through another project', async () => {
    const file = await createFile(database.pool, { projectId, title: '大纲', fileType: 'outline' });
    const other = await createProject(database.pool, { ownerId: (await getOwner()).id, title: 'Other' });
    expect(await getFile(database.pool, other.id, file.id)).toBeNull();
    await expect(
      saveFileContent(database.pool, { fileId: file.id, projectId: other.id, content: 'x', source: 'ai' }),
    ).rejects.toBeInstanceOf(FileNotFoundError);
  });
});

async function getOwner(): Promise<{ id: string }> {
  const { rows } = await database.pool.query<{ id: string }>(
    'SELECT owner_id AS id FROM projects WHERE id = $1',
    [projectId],
  );
  return rows[0]!;
}
