import { mergeSources, type Source } from '@quill/contracts';
import { createFile } from '@quill/db/workers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ToolResult } from '../src/index.ts';
import { createToolFixture, type ToolFixture } from './fixture.ts';

let fixture: ToolFixture;
let chapterId: string;
let characterId: string;

beforeAll(async () => {
  fixture = await createToolFixture();
  const pool = fixture.database.pool;
  const chapter = await createFile(pool, {
    projectId: fixture.projectId,
    title: '第一章 雨夜',
    fileType: 'draft',
    content: '# 第一章 雨夜\n雨下个不停。林晚守着书店。\n## 尾声\n雷声远去。',
  });
  chapterId = chapter.id;
  const character = await createFile(pool, {
    projectId: fixture.projectId,
    title: '人物：林晚',
    fileType: 'character',
    content: '书店店主，怕雷声。',
  });
  characterId = character.id;
});
afterAll(async () => {
  await fixture?.close();
});

const sourcesOf = (result: ToolResult): Source[] | undefined =>
  result.status === 'ok' ? result.sources : undefined;

describe('tools that read project material name their sources (docs/protocol.md)', () => {
  it('a full read names the file, its version and full: true', async () => {
    const context = await fixture.context();
    const read = await fixture.call(context, 'query_files', { id: characterId });
    expect(sourcesOf(read)).toEqual([
      { kind: 'file', file_id: characterId, title: '人物：林晚', version: expect.any(Number), full: true },
    ]);
  });

  it('a range read names the range it read', async () => {
    const context = await fixture.context();
    const read = await fixture.call(context, 'query_files', { id: chapterId, section: '尾声' });
    const [source] = sourcesOf(read) ?? [];
    expect(source).toMatchObject({ file_id: chapterId, full: false });
    expect(source?.ranges).toHaveLength(1);
    expect(source?.ranges?.[0]).toMatch(/^\d+-\d+/);
  });

  it('a search names its hits; a plain listing names nothing', async () => {
    const context = await fixture.context();
    const search = await fixture.call(context, 'query_files', { query: '雷声' });
    expect(
      sourcesOf(search)
        ?.map((source) => source.file_id)
        .sort(),
    ).toEqual([chapterId, characterId].sort());
    const listing = await fixture.call(context, 'query_files', {});
    expect(sourcesOf(listing)).toBeUndefined();
  });

  it('a failed read names no source', async () => {
    const context = await fixture.context();
    const missing = await fixture.call(context, 'query_files', { id: crypto.randomUUID() });
    expect(missing.status).toBe('error');
  });
});

describe('mergeSources', () => {
  const base = { kind: 'file' as const, title: 't' };
  it('keeps one source per file: the newest version, full when any read was, ranges otherwise', () => {
    const merged = mergeSources(
      [
        { ...base, file_id: 'a', version: 1, full: false, ranges: ['0-10'] },
        { ...base, file_id: 'b', version: 3, full: false, ranges: ['5-9'] },
      ],
      [
        { ...base, file_id: 'a', version: 2, full: false, ranges: ['10-20'] },
        { ...base, file_id: 'b', version: 3, full: true },
        { ...base, file_id: 'a', version: 2, full: false, ranges: ['10-20'] },
      ],
      undefined,
    );
    expect(merged).toEqual([
      { ...base, file_id: 'a', version: 2, full: false, ranges: ['0-10', '10-20'] },
      { ...base, file_id: 'b', version: 3, full: true },
    ]);
  });
});
