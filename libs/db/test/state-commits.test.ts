import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testUrls } from '../../../test/support/urls.ts';
import { commitProjectNotes, createProject, createUser } from '../src/gateway/index.ts';
import { withTransaction } from '../src/index.ts';
import { listStateCommits, type StateWriter } from '../src/shared-tables/state-commits.ts';
import { mergeText } from '../src/state-merge.ts';
import { createTestDatabase, type TestDatabase } from '../src/testing.ts';

let database: TestDatabase;
let userId: string;
beforeAll(async () => {
  database = await createTestDatabase({ serverUrl: testUrls.database });
  userId = (await createUser(database.pool, { email: 'commits@example.com', displayName: 'C' })).id;
});
afterAll(async () => {
  await database.drop();
});

const commit = (projectId: string, baseRev: number, value: string, writer: StateWriter) =>
  withTransaction(database.pool, (client) =>
    commitProjectNotes(client, { projectId, baseRev, value, writer }),
  );

describe('mergeText', () => {
  it('merges disjoint line changes and refuses overlapping ones', () => {
    expect(mergeText('a\nb\nc\nd', 'a\nB\nc\nd', 'a\nb\nc\nD')).toEqual({
      kind: 'merged',
      value: 'a\nB\nc\nD',
    });
    expect(mergeText('a\nb\nc\nd', 'a\nB\nc\nd', 'a\nX\nc\nd')).toEqual({ kind: 'conflict' });
    expect(mergeText('a', 'a', 'b')).toEqual({ kind: 'merged', value: 'b' });
  });
});

describe('commitProjectNotes: value + rev + source', () => {
  it('commits at the current rev, merges a stale disjoint one, refuses an overlapping one with what stands', async () => {
    const { id } = await createProject(database.pool, { ownerId: userId, title: '备注' });
    const author: StateWriter = { kind: 'author', userId, memberRole: 'owner' };
    const agent: StateWriter = { kind: 'agent', role: 'writer', runId: crypto.randomUUID() };
    expect(await commit(id, 0, '人物：林雨\n地点：旧书店\n时间：雨夜', author)).toMatchObject({
      kind: 'committed',
      rev: 1,
      merged: false,
    });
    // The agent changes the first line at rev 1.
    expect(await commit(id, 1, '人物：林雨（店主）\n地点：旧书店\n时间：雨夜', agent)).toMatchObject({
      rev: 2,
    });
    // The author, still at rev 1, changes the last line: disjoint, merged.
    const merged = await commit(id, 1, '人物：林雨\n地点：旧书店\n时间：深秋雨夜', author);
    expect(merged).toEqual({
      kind: 'committed',
      rev: 3,
      merged: true,
      value: '人物：林雨（店主）\n地点：旧书店\n时间：深秋雨夜',
    });
    // Still at rev 1, the same first line the agent changed: refused, nothing written.
    const refused = await commit(id, 1, '人物：陈默\n地点：旧书店\n时间：雨夜', author);
    expect(refused).toEqual({
      kind: 'conflict',
      rev: 3,
      value: '人物：林雨（店主）\n地点：旧书店\n时间：深秋雨夜',
      conflicts: ['notes'],
    });
    // A rev from the future is never merged.
    expect((await commit(id, 9, 'x', author)).kind).toBe('conflict');

    const log = await listStateCommits(database.pool, id, 'notes');
    expect(log.map((entry) => [entry.rev, entry.baseRev, entry.merged, entry.source.split(':')[0]])).toEqual([
      [3, 1, true, 'author'],
      [2, 1, false, 'agent'],
      [1, 0, false, 'author'],
      [0, 0, false, 'baseline'],
    ]);
  });

  it('a viewer may not commit', async () => {
    const { id } = await createProject(database.pool, { ownerId: userId, title: '只读' });
    const viewer: StateWriter = { kind: 'author', userId, memberRole: 'viewer' };
    expect(await commit(id, 0, '改', viewer)).toEqual({ kind: 'forbidden' });
  });
});
