import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testUrls } from '../../../test/support/urls.ts';
import { createFile, createProject, createUser, softDeleteFile } from '../src/gateway/index.ts';
import { searchFiles } from '../src/index.ts';
import { createTestDatabase, type TestDatabase } from '../src/testing.ts';

let database: TestDatabase;
let projectId: string;
const files: Record<string, string> = {};

beforeAll(async () => {
  database = await createTestDatabase({ serverUrl: testUrls.database });
  const user = await createUser(database.pool, { email: 'search@example.com', displayName: 'Search' });
  projectId = (await createProject(database.pool, { ownerId: user.id, title: 'Search' })).id;
  const seed: Array<[string, string]> = [
    ['钟楼', '林晚在钟楼下听见铜铃。Lin Wan rang the BELL.'],
    ['旧书店', '雨夜的旧书店，铜铃响了一声。'],
    ['电台', '温言在废弃电台找到半截蜡烛，100% 的把握，file_name 在此。'],
    ['无关', '风从海上来。'],
    ['删掉的', '林晚 铜铃 钟楼'],
  ];
  for (const [title, content] of seed) {
    files[title] = (await createFile(database.pool, { projectId, title, fileType: 'draft', content })).id;
  }
  await softDeleteFile(database.pool, projectId, files.删掉的!);
});
afterAll(async () => {
  await database.drop();
});

const search = (terms: string[], fileIds = Object.values(files), query = terms.join(' ')) =>
  searchFiles(database.pool, { projectId, fileIds, terms, query, limit: 10 });

describe('searchFiles', () => {
  it('counts the distinct terms a file holds in its text or title, most first, live files only', async () => {
    const hits = await search(['铜铃', '钟楼', '林晚']);
    expect(hits.map((hit) => [hit.id, hit.hits])).toEqual([
      [files.钟楼, 3],
      [files.旧书店, 1],
    ]);
    expect(hits[0]?.content).toContain('林晚在钟楼下');
  });

  it('matches a term with a Latin letter without case, and any other as written', async () => {
    expect((await search(['bell', 'lin wan'])).map((hit) => [hit.id, hit.hits])).toEqual([[files.钟楼, 2]]);
    // Full-width and half-width forms are different text: no folding outside ASCII letters.
    expect(await search(['１００'])).toEqual([]);
    expect((await search(['100'])).map((hit) => hit.id)).toEqual([files.电台]);
  });

  it('takes % and _ in a term as themselves, not as patterns', async () => {
    expect((await search(['0%'])).map((hit) => hit.id)).toEqual([files.电台]);
    expect((await search(['e_n'])).map((hit) => hit.id)).toEqual([files.电台]);
    expect(await search(['e%n'])).toEqual([]);
    expect(await search(['铜_'])).toEqual([]);
  });

  it('searches only the files it is given, and ranks ties by the title', async () => {
    expect((await search(['铜铃'], [files.旧书店!])).map((hit) => hit.id)).toEqual([files.旧书店]);
    const tie = await search(['铜铃'], [files.钟楼!, files.旧书店!], '旧书店');
    expect(tie.map((hit) => hit.id)).toEqual([files.旧书店, files.钟楼]);
  });
});
