import { getFile, listFiles, listFileVersions, lockFile } from '@quill/db';
import { saveFileContentIfVersion } from '@quill/db/gateway';
import { finishRun } from '@quill/db/router';
import { bumpRunEpoch, createFile, saveFileContent } from '@quill/db/workers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { promoteReads, type ToolContext } from '../src/index.ts';
import { createToolFixture, errorType, okData, type ToolFixture } from './fixture.ts';

let fixture: ToolFixture;
beforeAll(async () => {
  fixture = await createToolFixture();
});
afterAll(async () => {
  await fixture?.close();
});

async function aiFile(title: string, content: string, folder = '') {
  const pool = fixture.database.pool;
  const file = await createFile(pool, { projectId: fixture.projectId, title, fileType: 'draft', folder });
  await saveFileContent(pool, { fileId: file.id, content, source: 'ai', runId: crypto.randomUUID() });
  return file.id;
}

/** The model reads the file and the next model call starts (the read is now what it saw). */
async function readAsModel(context: ToolContext, id: string) {
  const data = okData(await fixture.call(context, 'query_files', { id }));
  promoteReads(context.state);
  return data;
}

describe('author edits: stale_content and author_edits', () => {
  it('refuses an edit of text the author changed after the model read it, and shows the change', async () => {
    const pool = fixture.database.pool;
    const id = await aiFile('第一章', '雨夜。\n她走进书店。\n店主在看书。');
    const context = await fixture.context();
    await readAsModel(context, id);

    // The author saves from the editor while the model is thinking.
    expect(
      await saveFileContentIfVersion(pool, {
        projectId: fixture.projectId,
        fileId: id,
        content: '雨夜。\n她推开吱呀作响的门。\n店主在看书。',
        expectedVersion: 1,
        source: 'author',
      }),
    ).toBe(2);
    const stale = await fixture.call(context, 'edit_file', {
      id,
      operation: 'replace',
      old_text: '店主在看书。',
      new_text: '店主抬起头。',
    });
    expect(errorType(stale)).toBe('stale_content');
    expect((await getFile(pool, fixture.projectId, id))?.version).toBe(2);

    // Reading again shows the net author diff since the AI last wrote.
    const reread = await readAsModel(context, id);
    expect(reread.author_edits).toContain('<author_edits since_ai_version="1">');
    expect(reread.author_edits).toContain('- 她走进书店。');
    expect(reread.author_edits).toContain('+ 她推开吱呀作响的门。');

    const untouched = okData(
      await fixture.call(context, 'edit_file', {
        id,
        operation: 'replace',
        old_text: '店主在看书。',
        new_text: '店主抬起头。',
      }),
    );
    expect(untouched.author_edits_touched).toBe(false);
  });

  it('flags author_edits_touched when the edit changes a passage the author wrote', async () => {
    const pool = fixture.database.pool;
    const id = await aiFile('第二章', '开头。\n中间。\n结尾。');
    await saveFileContent(pool, {
      fileId: id,
      content: '开头。\n作者加的一段。\n中间。\n结尾。',
      source: 'author',
    });
    const context = await fixture.context();
    await readAsModel(context, id);
    const touched = okData(
      await fixture.call(context, 'edit_file', {
        id,
        operation: 'replace',
        old_text: '作者加的',
        new_text: '改过的',
      }),
    );
    expect(touched.author_edits_touched).toBe(true);
  });

  it('compares under a row lock: an edit waiting on the author’s open save sees it and refuses', async () => {
    const pool = fixture.database.pool;
    const id = await aiFile('第三章', '原文。');
    const context = await fixture.context();
    await readAsModel(context, id);

    const author = await pool.connect();
    try {
      await author.query('BEGIN');
      await lockFile(author, fixture.projectId, id);
      await saveFileContent(author, { fileId: id, content: '作者改过的原文。', source: 'author' });
      // The tool's SELECT … FOR UPDATE waits for this transaction; whenever it runs, it must see
      // the author's committed text, never the text it read before.
      const edit = fixture.call(context, 'edit_file', { id, operation: 'append', new_text: '续写。' });
      await author.query('COMMIT');
      expect(errorType(await edit)).toBe('stale_content');
    } finally {
      author.release();
    }
    expect((await getFile(pool, fixture.projectId, id))?.content).toBe('作者改过的原文。');
  });
});

describe('protected manuscripts', () => {
  it('refuses chat deletes of author-saved files, by id and recursively, deleting nothing', async () => {
    const pool = fixture.database.pool;
    const saved = await createFile(pool, {
      projectId: fixture.projectId,
      title: '作者的章',
      fileType: 'draft',
      folder: '卷三',
      content: '作者写的。',
    });
    const sibling = await aiFile('AI 的章', 'AI 写的。', '卷三/草稿');
    const context = await fixture.context();
    expect(errorType(await fixture.call(context, 'delete_file', { id: saved.id }))).toBe(
      'protected_manuscript',
    );
    const folder = await fixture.call(context, 'delete_file', { folder: '卷三', recursive: true });
    expect(errorType(folder)).toBe('protected_manuscript');
    expect(folder.status === 'error' && folder.message).toContain('作者的章');
    const live = (await listFiles(pool, fixture.projectId)).map((file) => file.id);
    expect(live).toEqual(expect.arrayContaining([saved.id, sibling]));

    // Ordinary edits of the author's file go through (seed: edit_file keeps its path).
    await readAsModel(context, saved.id);
    okData(
      await fixture.call(context, 'edit_file', {
        id: saved.id,
        operation: 'append',
        new_text: 'AI 补一句。',
      }),
    );
  });

  it('an AI file becomes protected once the author saves it', async () => {
    const pool = fixture.database.pool;
    const id = await aiFile('待定', 'AI 稿');
    await saveFileContent(pool, { fileId: id, content: 'AI 稿（作者看过并保存）', source: 'author' });
    const context = await fixture.context();
    expect(errorType(await fixture.call(context, 'delete_file', { id }))).toBe('protected_manuscript');
    expect(errorType(await fixture.call(context, 'create_file', { title: '待定', file_type: 'draft' }))).toBe(
      'protected_manuscript',
    );
  });
});

describe('write fencing', () => {
  it('a worker holding a stale epoch cannot write through any tool', async () => {
    const pool = fixture.database.pool;
    const id = await aiFile('围栏', '原文。');
    const stale = await fixture.context();
    await readAsModel(stale, id);
    expect(await bumpRunEpoch(pool, stale.runId)).toBe(1);

    const attempts: Array<[string, Record<string, unknown>]> = [
      ['create_file', { title: '不该出现', file_type: 'draft' }],
      ['edit_file', { id, operation: 'append', new_text: '迟到的写入' }],
      ['rename_file', { id, new_title: '改名' }],
      ['delete_file', { id }],
      ['update_project', { notes_proposals: '迟到的备注' }],
    ];
    for (const [name, args] of attempts) {
      expect(errorType(await fixture.call(stale, name, args)), name).toBe('run_not_active');
    }
    expect(await getFile(pool, fixture.projectId, id)).toMatchObject({
      title: '围栏',
      content: '原文。',
      version: 1,
    });
    expect((await listFiles(pool, fixture.projectId)).some((file) => file.title === '不该出现')).toBe(false);

    // The new epoch's holder writes normally.
    const current = { ...stale, epoch: 1 };
    okData(await fixture.call(current, 'edit_file', { id, operation: 'append', new_text: '新的写入' }));
    expect((await listFileVersions(pool, id))[0]).toMatchObject({ source: 'ai', runId: stale.runId });
  });

  it('nothing is written once the run has finished', async () => {
    const id = await aiFile('结束后', '原文。');
    const context = await fixture.context();
    await finishRun(fixture.database.pool, context.runId, { phase: 'done', stopReason: 'completed' });
    expect(
      errorType(await fixture.call(context, 'edit_file', { id, operation: 'append', new_text: 'x' })),
    ).toBe('run_not_active');
  });
});
