import { createFile, saveFileContent } from '@quill/db/workers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_READ_CHARS } from '../src/file-ranges.ts';
import { promoteReads } from '../src/index.ts';
import { createToolFixture, errorType, okData, type ToolFixture } from './fixture.ts';

let fixture: ToolFixture;
let chapterId: string;
const CHAPTER =
  '# 第一卷\n卷首语。\n## 第一章 雨夜\n雨下个不停。\n## 第二章 书店\n店里很暗。\n# 第二卷\n新的开始。';

beforeAll(async () => {
  fixture = await createToolFixture();
  const pool = fixture.database.pool;
  const file = await createFile(pool, { projectId: fixture.projectId, title: '正文', fileType: 'draft' });
  await saveFileContent(pool, {
    fileId: file.id,
    content: CHAPTER,
    source: 'ai',
    runId: crypto.randomUUID(),
  });
  chapterId = file.id;
  await createFile(pool, {
    projectId: fixture.projectId,
    title: '人物：林晚',
    fileType: 'character',
    content: '书店店主，怕雷声。',
  });
});
afterAll(async () => {
  await fixture?.close();
});

describe('query_files: listing and search', () => {
  it('lists files without their text, filters by type, and searches titles and text with a snippet', async () => {
    const context = await fixture.context();
    const all = okData(await fixture.call(context, 'query_files', {})).files as Array<
      Record<string, unknown>
    >;
    expect(all.map((file) => file.title).sort()).toEqual(['人物：林晚', '正文']);
    expect(all.every((file) => !('content' in file) && typeof file.chars === 'number')).toBe(true);
    const characters = okData(await fixture.call(context, 'query_files', { file_type: 'character' })).files;
    expect(characters).toHaveLength(1);
    const found = okData(await fixture.call(context, 'query_files', { query: '雷声' })).files as Array<
      Record<string, unknown>
    >;
    expect(found).toMatchObject([{ title: '人物：林晚', snippet: '书店店主，怕雷声。' }]);
    // Listing is not reading: nothing is recorded as seen.
    expect(context.state.pendingReads.size).toBe(0);
  });
});

describe('query_files: reading by id', () => {
  it('reads the full text, stating the range, and it counts as seen from the next model call', async () => {
    const context = await fixture.context();
    const data = okData(await fixture.call(context, 'query_files', { id: chapterId }));
    expect(data).toMatchObject({
      content: CHAPTER,
      range: `0-${CHAPTER.length} of ${CHAPTER.length}`,
      full_text: true,
    });
    expect(context.state.readSnapshots.has(chapterId)).toBe(false);
    promoteReads(context.state);
    expect(context.state.readSnapshots.get(chapterId)).toEqual({ version: 1, content: CHAPTER, full: true });
  });

  it('reads a section, the tail or a window; range reads are staleness snapshots, not full reads', async () => {
    const context = await fixture.context();
    const section = okData(await fixture.call(context, 'query_files', { id: chapterId, section: '第一章' }));
    expect(section.content).toBe('## 第一章 雨夜\n雨下个不停。\n');
    expect(section.full_text).toBe(false);
    expect(section.range).toMatch(/^\d+-\d+ of \d+$/);
    const volume = okData(await fixture.call(context, 'query_files', { id: chapterId, section: '第一卷' }));
    expect(volume.content).toBe(
      '# 第一卷\n卷首语。\n## 第一章 雨夜\n雨下个不停。\n## 第二章 书店\n店里很暗。\n',
    );
    const tail = okData(await fixture.call(context, 'query_files', { id: chapterId, tail_chars: 5 }));
    expect(tail).toMatchObject({
      content: '新的开始。',
      range: `${CHAPTER.length - 5}-${CHAPTER.length} of ${CHAPTER.length}`,
    });
    const window = okData(
      await fixture.call(context, 'query_files', { id: chapterId, start_char: 2, max_chars: 3 }),
    );
    expect(window).toMatchObject({ content: '第一卷', range: `2-5 of ${CHAPTER.length}`, full_text: false });
    promoteReads(context.state);
    expect(context.state.readSnapshots.get(chapterId)).toMatchObject({
      version: 1,
      content: CHAPTER,
      full: false,
    });

    const missing = await fixture.call(context, 'query_files', { id: chapterId, section: '第九章' });
    expect(errorType(missing)).toBe('section_not_found');
    expect(missing.status === 'error' && missing.message).toContain('第二章 书店');
  });

  it('keeps a full read full when a range of the same version is read after it', async () => {
    const context = await fixture.context();
    okData(await fixture.call(context, 'query_files', { id: chapterId }));
    okData(await fixture.call(context, 'query_files', { id: chapterId, tail_chars: 10 }));
    promoteReads(context.state);
    expect(context.state.readSnapshots.get(chapterId)?.full).toBe(true);
  });

  it('refuses to serve the same part of an unchanged file twice in a step', async () => {
    const context = await fixture.context();
    okData(await fixture.call(context, 'query_files', { id: chapterId, tail_chars: 20 }));
    expect(errorType(await fixture.call(context, 'query_files', { id: chapterId, tail_chars: 20 }))).toBe(
      'repeated_read',
    );
    okData(await fixture.call(context, 'query_files', { id: chapterId, tail_chars: 21 }));
    await saveFileContent(fixture.database.pool, {
      fileId: chapterId,
      content: `${CHAPTER}\n尾声。`,
      source: 'ai',
    });
    okData(await fixture.call(context, 'query_files', { id: chapterId, tail_chars: 20 }));
    await saveFileContent(fixture.database.pool, { fileId: chapterId, content: CHAPTER, source: 'ai' });
  });

  it('reads a long file in windows: the default read is capped and says so', async () => {
    const long = await createFile(fixture.database.pool, {
      projectId: fixture.projectId,
      title: '长篇',
      fileType: 'draft',
      content: '字'.repeat(MAX_READ_CHARS + 10),
    });
    const data = okData(await fixture.call(await fixture.context(), 'query_files', { id: long.id }));
    expect(data).toMatchObject({ range: `0-${MAX_READ_CHARS} of ${MAX_READ_CHARS + 10}`, full_text: false });
  });

  it('answers file_not_found for an unknown id', async () => {
    const result = await fixture.call(await fixture.context(), 'query_files', { id: crypto.randomUUID() });
    expect(errorType(result)).toBe('file_not_found');
  });
});
