import { randomUUID } from 'node:crypto';
import { createFile, createProject, softDeleteFile } from '@quill/db/gateway';
import { createTestDatabase, type TestDatabase } from '@quill/db/testing';
import { saveFileContent } from '@quill/db/workers';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { listedFiles, searchFilesInSql } from '../../../test/support/sql-file-search.ts';
import type { FileSearchHit } from '../src/file-search.ts';
import { createProjectTexts, type ProjectTexts } from '../src/project-texts.ts';
import { createTextCache } from '../src/text-cache.ts';
import { createUserIn } from './support.ts';

let database: TestDatabase;
let userId: string;

beforeAll(async () => {
  database = await createTestDatabase();
  userId = await createUserIn(database, 'search');
});
afterAll(async () => {
  await database?.drop();
});

async function newProject(
  seed: ReadonlyArray<readonly [string, string]>,
): Promise<{ projectId: string; ids: string[] }> {
  const projectId = (await createProject(database.pool, { ownerId: userId, title: `Search ${randomUUID()}` }))
    .id;
  const ids: string[] = [];
  for (const [title, content] of seed) {
    ids.push((await createFile(database.pool, { projectId, title, fileType: 'draft', content })).id);
  }
  return { projectId, ids };
}

const listing = (projectId: string) => listedFiles(database.pool, projectId);

async function searchInProcess(
  texts: ProjectTexts,
  projectId: string,
  input: { fileIds: readonly string[]; terms: readonly string[]; query: string; limit: number },
): Promise<FileSearchHit[]> {
  const listed = await listing(projectId);
  const files = input.fileIds.map((id) => listed.get(id)).filter((file) => file !== undefined);
  const [hits] = await texts.search({
    projectId,
    listed,
    parts: [{ files, limit: input.limit }],
    terms: input.terms,
    query: input.query,
  });
  return hits!;
}

describe('the retrieval search, in the process and as PostgreSQL ran it', () => {
  let projectId: string;
  const files: Record<string, string> = {};
  const seed = [
    ['钟楼', '林晚在钟楼下听见铜铃。Lin Wan rang the BELL.'],
    ['旧书店', '雨夜的旧书店，铜铃响了一声。'],
    ['电台', '温言在废弃电台找到半截蜡烛，100% 的把握，file_name 在此。'],
    ['无关', '风从海上来。'],
    ['删掉的', '林晚 铜铃 钟楼'],
  ] as const;

  beforeAll(async () => {
    const made = await newProject(seed);
    projectId = made.projectId;
    seed.forEach(([title], index) => {
      files[title] = made.ids[index]!;
    });
    await softDeleteFile(database.pool, projectId, files.删掉的!);
  });

  const engines = {
    'in the process': (fileIds: readonly string[], terms: string[], query: string) =>
      searchInProcess(createProjectTexts(database.pool), projectId, { fileIds, terms, query, limit: 10 }),
    'in PostgreSQL (the reference)': (fileIds: readonly string[], terms: string[], query: string) =>
      searchFilesInSql(database.pool, { projectId, fileIds, terms, query, limit: 10 }),
  };

  for (const [name, engine] of Object.entries(engines)) {
    describe(name, () => {
      const search = (
        terms: string[],
        fileIds: readonly string[] = Object.values(files),
        query = terms.join(' '),
      ) => engine(fileIds, terms, query);

      it('counts the distinct terms a file holds in its text or title, most first, live files only', async () => {
        const hits = await search(['铜铃', '钟楼', '林晚']);
        expect(hits.map((hit) => [hit.id, hit.hits])).toEqual([
          [files.钟楼, 3],
          [files.旧书店, 1],
        ]);
        expect(hits[0]?.content).toContain('林晚在钟楼下');
      });

      it('matches a term with a Latin letter without case, and any other as written', async () => {
        expect((await search(['bell', 'lin wan'])).map((hit) => [hit.id, hit.hits])).toEqual([
          [files.钟楼, 2],
        ]);
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
        expect(tie[0]!.titleSimilarity).toBeGreaterThan(tie[1]!.titleSimilarity);
      });
    });
  }

  it('finds, counts and ranks what the PostgreSQL statement did, over generated texts and terms', async () => {
    // Letters that fold (Latin, Greek with its final sigma, the dotted İ), CJK, digits, the
    // pattern characters of LIKE and spaces: the cases where the two could part. Half the terms
    // are pieces of the generated texts, lower-cased as queryTerms does, so most of them match.
    const alphabet = fc.constantFrom(...'铜铃钟楼aAbBiIİıΣσςΟο0１%_\\ '.split(''));
    const text = (maxLength: number) => fc.string({ unit: alphabet, maxLength });
    const piece = fc.record({ file: fc.nat(), start: fc.nat(), length: fc.integer({ min: 1, max: 4 }) });
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(text(6), text(40)), { minLength: 1, maxLength: 6 }),
        fc.array(fc.oneof(text(4), piece), { minLength: 1, maxLength: 8 }),
        text(12),
        fc.integer({ min: 1, max: 6 }),
        async (seedFiles, termSources, query, limit) => {
          const terms = [
            ...new Set(
              termSources
                .map((source) => {
                  if (typeof source === 'string') return source;
                  const content = seedFiles[source.file % seedFiles.length]![1];
                  const start = content.length === 0 ? 0 : source.start % content.length;
                  return content.slice(start, start + source.length);
                })
                .map((term) => term.toLowerCase())
                .filter((term) => term.length > 0),
            ),
          ];
          fc.pre(terms.length > 0);
          const made = await newProject(seedFiles);
          const input = { fileIds: made.ids, terms, query, limit };
          const expected = await searchFilesInSql(database.pool, { projectId: made.projectId, ...input });
          const actual = await searchInProcess(createProjectTexts(database.pool), made.projectId, input);
          expect(actual).toEqual(expected);
        },
      ),
      { numRuns: 150 },
    );
  });
});

describe("a replica's cached texts", () => {
  it('serves a listed version without a read, and reads a file again once it has a new version', async () => {
    const { projectId, ids } = await newProject([
      ['第一章', '沈砚推开旧书店的门。'],
      ['第二章', '雨停了。'],
    ]);
    const texts = createProjectTexts(database.pool);
    const search = (terms: string[]) =>
      searchInProcess(texts, projectId, { fileIds: ids, terms, query: terms.join(''), limit: 10 });
    expect((await search(['铜铃'])).map((hit) => hit.id)).toEqual([]);

    const query = vi.spyOn(database.pool, 'query');
    try {
      const listed = await listing(projectId);
      query.mockClear();
      const contents = await texts.contents(projectId, ids, listed);
      expect(contents.get(ids[0]!)).toBe('沈砚推开旧书店的门。');
      expect(query).not.toHaveBeenCalled();
    } finally {
      query.mockRestore();
    }

    await saveFileContent(database.pool, { fileId: ids[1]!, content: '铜铃响了。', source: 'author' });
    expect((await search(['铜铃'])).map((hit) => hit.id)).toEqual([ids[1]]);
    expect((await texts.contents(projectId, [ids[1]!], await listing(projectId))).get(ids[1]!)).toBe(
      '铜铃响了。',
    );
  });

  it('reads a text once when two compiles ask for it at the same time', async () => {
    const { projectId, ids } = await newProject([
      ['第一章', '钟楼的铜铃响了。'],
      ['第二章', '温言走进旧书店。'],
    ]);
    const texts = createProjectTexts(database.pool);
    const listed = await listing(projectId);
    const query = vi.spyOn(database.pool, 'query');
    try {
      const [first, second, search] = await Promise.all([
        texts.contents(projectId, ids, listed),
        texts.contents(projectId, [ids[1]!], listed),
        texts.search({
          projectId,
          listed,
          parts: [{ files: [...listed.values()], limit: 5 }],
          terms: ['铜铃'],
          query: '',
        }),
      ]);
      expect(first.get(ids[0]!)).toBe('钟楼的铜铃响了。');
      expect(second.get(ids[1]!)).toBe('温言走进旧书店。');
      expect(search[0]!.map((hit) => hit.id)).toEqual([ids[0]]);
      // One read of the texts and the search's title similarities: nothing read twice.
      expect(query).toHaveBeenCalledTimes(2);
    } finally {
      query.mockRestore();
    }
  });

  it('reads a file itself when a read in flight was started for an older version than it listed', async () => {
    const { projectId, ids } = await newProject([['第一章', '钟楼的铜铃响了。']]);
    const texts = createProjectTexts(database.pool);
    const listed = await listing(projectId);
    const newer = new Map([...listed].map(([id, file]) => [id, { ...file, version: file.version + 1 }]));
    const query = vi.spyOn(database.pool, 'query');
    try {
      await Promise.all([texts.contents(projectId, ids, listed), texts.contents(projectId, ids, newer)]);
      expect(query).toHaveBeenCalledTimes(2);
    } finally {
      query.mockRestore();
    }
  });

  it('keeps no text of a project bigger than half the cache, and reads it whole each time', async () => {
    const small = await newProject([['第一章', '林'.repeat(200)]]);
    const big = await newProject([['第二章', '雨'.repeat(300)]]);
    // 1,000 bytes: a project may take 500, 250 characters.
    const cache = createTextCache(1_000);
    const texts = createProjectTexts(database.pool, cache);
    await texts.contents(small.projectId, small.ids, await listing(small.projectId));
    await texts.contents(big.projectId, big.ids, await listing(big.projectId));
    expect(cache.stats()).toMatchObject({ entries: 1, bytes: 400 });
    const again = await texts.contents(big.projectId, big.ids, await listing(big.projectId));
    expect(again.get(big.ids[0]!)).toBe('雨'.repeat(300));
    expect(cache.stats()).toMatchObject({ entries: 1, bytes: 400 });
  });

  it("never answers for a file the compile's own listing does not name", async () => {
    const mine = await newProject([['人物：温言', '温言的秘密。']]);
    const theirs = await newProject([['别处', '不是这个项目的。']]);
    const texts = createProjectTexts(database.pool);
    await texts.contents(mine.projectId, mine.ids, await listing(mine.projectId));
    // A focus id from another project: its text is cached under its own listing, but this
    // project's listing does not name it, so it is read under this project's filter (nothing).
    await texts.contents(theirs.projectId, theirs.ids, await listing(theirs.projectId));
    const asked = await texts.contents(mine.projectId, theirs.ids, await listing(mine.projectId));
    expect(asked.size).toBe(0);
  });

  it('with no room, reads every text each time and finds the same', async () => {
    const { projectId, ids } = await newProject([['钟楼', '铜铃在钟楼里。']]);
    const uncached = createProjectTexts(database.pool, createTextCache(0));
    const first = await searchInProcess(uncached, projectId, {
      fileIds: ids,
      terms: ['铜铃'],
      query: '',
      limit: 5,
    });
    const listed = await listing(projectId);
    const query = vi.spyOn(database.pool, 'query');
    try {
      const again = await uncached.contents(projectId, ids, listed);
      expect(again.get(ids[0]!)).toBe('铜铃在钟楼里。');
      expect(query).toHaveBeenCalledTimes(1);
    } finally {
      query.mockRestore();
    }
    expect(first.map((hit) => hit.hits)).toEqual([1]);
  });
});
