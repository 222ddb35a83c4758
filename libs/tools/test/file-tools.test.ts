import { getFile, listFileVersions } from '@quill/db';
import { createFile, saveFileContent } from '@quill/db/workers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createToolFixture, errorType, okData, type ToolFixture } from './fixture.ts';

let fixture: ToolFixture;
beforeAll(async () => {
  fixture = await createToolFixture();
});
afterAll(async () => {
  await fixture?.close();
});

/** A file the AI wrote (not protected). */
async function aiFile(title: string, content: string, folder = '') {
  const file = await createFile(fixture.database.pool, {
    projectId: fixture.projectId,
    title,
    fileType: 'draft',
    folder,
  });
  await saveFileContent(fixture.database.pool, {
    fileId: file.id,
    content,
    source: 'ai',
    runId: crypto.randomUUID(),
  });
  return file.id;
}

describe('create_file', () => {
  it('creates an empty file that waits for its <file> body', async () => {
    const context = await fixture.context();
    const data = okData(await fixture.call(context, 'create_file', { title: '第一章', file_type: 'draft' }));
    expect(data).toMatchObject({ title: '第一章', file_type: 'draft' });
    expect(data.next_step).toMatch(/<file>/);
    expect(context.state.pendingFile).toMatchObject({ fileId: data.file_id, title: '第一章' });
    expect(await getFile(fixture.database.pool, fixture.projectId, data.file_id as string)).toMatchObject({
      content: '',
      version: 0,
    });
  });

  it('streams one file at a time: another create waits, the repeat-create returns the blocking file', async () => {
    const context = await fixture.context();
    const first = okData(await fixture.call(context, 'create_file', { title: '第二章', file_type: 'draft' }));
    const other = await fixture.call(context, 'create_file', { title: '第三章', file_type: 'draft' });
    expect(errorType(other)).toBe('pending_empty_file_unwritten');
    expect(other.status === 'error' && other.message).toContain('第二章');
    const repeat = okData(
      await fixture.call(context, 'create_file', { title: '第二章', file_type: 'draft' }),
    );
    expect(repeat).toMatchObject({ file_id: first.file_id, content: '' });
    expect(repeat.next_step).toMatch(/<file>/);
  });

  it('reuses an AI file of the same name, but never one the author saved', async () => {
    const aiId = await aiFile('第四章', 'AI 初稿');
    const reused = okData(
      await fixture.call(await fixture.context(), 'create_file', { title: '第四章', file_type: 'draft' }),
    );
    expect(reused).toMatchObject({ file_id: aiId, reused: true, current_chars: 5 });

    const saved = await createFile(fixture.database.pool, {
      projectId: fixture.projectId,
      title: '序章',
      fileType: 'draft',
      content: '作者亲手写的序章。',
    });
    const context = await fixture.context();
    const refused = await fixture.call(context, 'create_file', { title: '序章', file_type: 'draft' });
    expect(errorType(refused)).toBe('protected_manuscript');
    expect(context.state.pendingFile).toBeUndefined();
    expect((await getFile(fixture.database.pool, fixture.projectId, saved.id))?.content).toBe(
      '作者亲手写的序章。',
    );

    const clash = await fixture.call(await fixture.context(), 'create_file', {
      title: '第四章',
      file_type: 'outline',
    });
    expect(errorType(clash)).toBe('duplicate_title');
  });
});

describe('edit_file', () => {
  it('replaces, inserts, appends and deletes, each a new AI version of this run', async () => {
    const id = await aiFile('编辑', '雨夜。\n她走进书店。');
    const context = await fixture.context();
    const edit = (args: Record<string, unknown>) => fixture.call(context, 'edit_file', { id, ...args });

    expect(okData(await edit({ operation: 'replace', old_text: '雨夜', new_text: '深夜' }))).toMatchObject({
      version: 2,
      author_edits_touched: false,
    });
    okData(await edit({ operation: 'insert', anchor: '她走进', new_text: '（门铃响）', position: 'before' }));
    okData(await edit({ operation: 'insert', anchor: '书店', new_text: '里' }));
    okData(await edit({ operation: 'append', new_text: '店主抬起头。' }));
    const last = okData(await edit({ operation: 'delete', old_text: '（门铃响）' }));
    const file = await getFile(fixture.database.pool, fixture.projectId, id);
    expect(file?.content).toBe('深夜。\n她走进书店里。\n店主抬起头。');
    expect(last).toMatchObject({ version: 6, chars: file?.content.length });
    const versions = await listFileVersions(fixture.database.pool, id);
    expect(
      versions.slice(0, 5).every((version) => version.source === 'ai' && version.runId === context.runId),
    ).toBe(true);
    expect(context.state.writtenFileIds.has(id)).toBe(true);
  });

  it('explains what to fix when the text is missing, ambiguous or the file is gone', async () => {
    const id = await aiFile('歧义', '他说好。她说好。');
    const context = await fixture.context();
    const missing = await fixture.call(context, 'edit_file', { id, operation: 'delete', old_text: '没有' });
    expect(errorType(missing)).toBe('text_not_found');
    const twice = await fixture.call(context, 'edit_file', {
      id,
      operation: 'replace',
      old_text: '说好',
      new_text: 'x',
    });
    expect(errorType(twice)).toBe('ambiguous_match');
    const gone = await fixture.call(context, 'edit_file', {
      id: crypto.randomUUID(),
      operation: 'append',
      new_text: 'x',
    });
    expect(errorType(gone)).toBe('file_not_found');
    expect((await getFile(fixture.database.pool, fixture.projectId, id))?.version).toBe(1);
  });

  it('writing the pending file through edit_file releases the one-file-at-a-time guard', async () => {
    const context = await fixture.context();
    const created = okData(await fixture.call(context, 'create_file', { title: '附录', file_type: 'note' }));
    okData(
      await fixture.call(context, 'edit_file', {
        id: created.file_id,
        operation: 'append',
        new_text: '内容',
      }),
    );
    expect(context.state.pendingFile).toBeUndefined();
    okData(await fixture.call(context, 'create_file', { title: '附录二', file_type: 'note' }));
  });
});

describe('delete_file', () => {
  it('deletes an AI file by id and a whole AI folder recursively', async () => {
    const single = await aiFile('废稿', 'x');
    const context = await fixture.context();
    expect(okData(await fixture.call(context, 'delete_file', { id: single })).deleted).toHaveLength(1);
    expect(await getFile(fixture.database.pool, fixture.projectId, single)).toBeNull();
    expect(errorType(await fixture.call(context, 'delete_file', { id: single }))).toBe('file_not_found');

    const a = await aiFile('甲', 'x', '旧稿');
    const b = await aiFile('乙', 'y', '旧稿/二稿');
    const keep = await aiFile('丙', 'z', '旧稿子');
    const deleted = okData(await fixture.call(context, 'delete_file', { folder: '旧稿', recursive: true }));
    expect((deleted.deleted as Array<{ id: string }>).map((file) => file.id).sort()).toEqual([a, b].sort());
    expect(await getFile(fixture.database.pool, fixture.projectId, keep)).not.toBeNull();
  });
});

describe('rename_file', () => {
  it('changes only the title and refuses a same-folder duplicate', async () => {
    const id = await aiFile('草稿一', '正文', '卷一');
    await aiFile('草稿二', '正文二', '卷一');
    await aiFile('终稿', '别的卷', '卷二');
    const context = await fixture.context();
    const duplicate = await fixture.call(context, 'rename_file', { id, new_title: '草稿二' });
    expect(errorType(duplicate)).toBe('duplicate_title');
    expect(okData(await fixture.call(context, 'rename_file', { id, new_title: '终稿' }))).toMatchObject({
      file_id: id,
      old_title: '草稿一',
      title: '终稿',
    });
    const file = await getFile(fixture.database.pool, fixture.projectId, id);
    expect(file).toMatchObject({ id, title: '终稿', content: '正文', version: 1 });
    expect(
      errorType(await fixture.call(context, 'rename_file', { id: crypto.randomUUID(), new_title: 'x' })),
    ).toBe('file_not_found');
  });
});
