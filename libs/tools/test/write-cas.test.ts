import { getFile, listFileVersions } from '@quill/db';
import { createFile, saveFileContent } from '@quill/db/workers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { promoteReads } from '../src/index.ts';
import { createToolFixture, errorType, okData, type ToolFixture } from './fixture.ts';

/** Compare-and-set and idempotency of the writing tools (docs/ai-writes.md). */
let fixture: ToolFixture;
beforeAll(async () => {
  fixture = await createToolFixture();
});
afterAll(async () => {
  await fixture?.close();
});

async function aiFile(title: string, content: string) {
  const pool = fixture.database.pool;
  const file = await createFile(pool, { projectId: fixture.projectId, title, fileType: 'draft' });
  await saveFileContent(pool, { fileId: file.id, content, source: 'ai', runId: crypto.randomUUID() });
  return file.id;
}

describe('writing tools compare against what the step saw', () => {
  it('rename_file and delete_file refuse a file that moved on since the model read it', async () => {
    const context = await fixture.context();
    const id = await aiFile('旧名', '正文一。');
    okData(await fixture.call(context, 'query_files', { id }));
    promoteReads(context.state);
    // Another run (not the author: the file stays unprotected) rewrites it meanwhile.
    await saveFileContent(fixture.database.pool, { fileId: id, content: '别处改过。', source: 'ai' });
    expect(errorType(await fixture.call(context, 'rename_file', { id, new_title: '新名' }))).toBe(
      'stale_content',
    );
    expect(errorType(await fixture.call(context, 'delete_file', { id }))).toBe('stale_content');
    expect(await getFile(fixture.database.pool, fixture.projectId, id)).toMatchObject({ title: '旧名' });
  });

  it('rename_file of a file the model never read is anchored on its id alone', async () => {
    const context = await fixture.context();
    const id = await aiFile('无人读过', '正文。');
    okData(await fixture.call(context, 'rename_file', { id, new_title: '改了名' }));
    expect(await getFile(fixture.database.pool, fixture.projectId, id)).toMatchObject({ title: '改了名' });
  });

  it('an edit_file call replayed with its key (a retry after an unknown commit) adds no version', async () => {
    const context = { ...(await fixture.context()), step: 1, callKey: 't0:call_1' };
    const id = await aiFile('第九章', '雨夜。');
    const args = { id, operation: 'append', new_text: '她推门进来。' };
    const first = okData(await fixture.call(context, 'edit_file', args));
    // The same call again, as a takeover or a retry would make it: the model's view is unchanged.
    context.state.readSnapshots.delete(id);
    const again = okData(await fixture.call(context, 'edit_file', args));
    expect(again.version).toBe(first.version);
    expect((await listFileVersions(fixture.database.pool, id)).map((version) => version.content)).toEqual([
      '雨夜。\n她推门进来。',
      '雨夜。',
    ]);
    // A different call (another key) is a new edit.
    const other = okData(await fixture.call({ ...context, callKey: 't1:call_2' }, 'edit_file', args));
    expect(other.version).toBe(Number(first.version) + 1);
  });

  it('create_file records the version the body must be based on', async () => {
    const context = await fixture.context();
    okData(await fixture.call(context, 'create_file', { title: '第十章', file_type: 'draft' }));
    expect(context.state.pendingFile).toMatchObject({ title: '第十章', baseVersion: 0 });
    const reusedContext = await fixture.context();
    const id = await aiFile('第十一章', '旧的 AI 正文。');
    okData(await fixture.call(reusedContext, 'create_file', { title: '第十一章', file_type: 'draft' }));
    expect(reusedContext.state.pendingFile).toMatchObject({ fileId: id, baseVersion: 1 });
  });
});
