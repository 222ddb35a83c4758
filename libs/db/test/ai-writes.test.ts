import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testUrls } from '../../../test/support/urls.ts';
import { createFile, createProject, createUser, softDeleteFile } from '../src/gateway/index.ts';
import { getFile, isTransientDbError, listFiles, listFileVersions, retryTransient } from '../src/index.ts';
import { createTestDatabase, type TestDatabase } from '../src/testing.ts';
import { retryDelay } from '../src/transient.ts';
import { draftTitle } from '../src/workers/ai-writes.ts';
import { saveAiBody, saveFileContent } from '../src/workers/index.ts';

let database: TestDatabase;
let projectId: string;
beforeAll(async () => {
  database = await createTestDatabase({ serverUrl: testUrls.database });
  const user = await createUser(database.pool, { email: 'ai-writes@example.com', displayName: 'AI writes' });
  projectId = (await createProject(database.pool, { ownerId: user.id, title: 'AI writes' })).id;
});
afterAll(async () => {
  await database.drop();
});

const runId = crypto.randomUUID();
const key = () => `test:${crypto.randomUUID()}`;

describe('saveAiBody: compare-and-set, drafts, idempotency', () => {
  it('saves into the file while it is at the base version, and a replayed key adds nothing', async () => {
    const file = await createFile(database.pool, { projectId, title: '一', fileType: 'draft' });
    const writeKey = key();
    const input = { projectId, fileId: file.id, baseVersion: 0, content: '正文', runId, writeKey };
    const first = await saveAiBody(database.pool, input);
    expect(first).toMatchObject({ kind: 'saved', fileId: file.id, version: 1, replayed: false });
    const again = await saveAiBody(database.pool, input);
    expect(again).toMatchObject({ kind: 'saved', fileId: file.id, version: 1, replayed: true });
    expect(await listFileVersions(database.pool, file.id)).toHaveLength(1);
  });

  it('puts the body in a linked draft when the author saved after the base version', async () => {
    const file = await createFile(database.pool, { projectId, title: '二', fileType: 'draft' });
    await saveFileContent(database.pool, { fileId: file.id, content: '作者的字', source: 'author' });
    const saved = await saveAiBody(database.pool, {
      projectId,
      fileId: file.id,
      baseVersion: 0,
      content: 'AI 的字',
      runId,
      writeKey: key(),
    });
    expect(saved).toMatchObject({ kind: 'drafted', title: '二（AI 草稿）', reason: 'author_saved' });
    expect(await getFile(database.pool, projectId, file.id)).toMatchObject({
      content: '作者的字',
      version: 1,
    });
    expect(await getFile(database.pool, projectId, saved.fileId)).toMatchObject({
      content: 'AI 的字',
      draftOf: file.id,
      version: 1,
      authorSaved: false,
    });
    // A second conflicting body gets the next free draft title.
    const second = await saveAiBody(database.pool, {
      projectId,
      fileId: file.id,
      baseVersion: 0,
      content: 'AI 又写了',
      runId,
      writeKey: key(),
    });
    expect(second).toMatchObject({ kind: 'drafted', title: '二（AI 草稿 2）' });
  });

  it('never lets a partial body replace text, but fills an empty file with it', async () => {
    const empty = await createFile(database.pool, { projectId, title: '三', fileType: 'draft' });
    const filled = await saveAiBody(database.pool, {
      projectId,
      fileId: empty.id,
      baseVersion: 0,
      content: '半截',
      runId,
      writeKey: key(),
      partialReason: 'user_stopped',
    });
    expect(filled).toMatchObject({ kind: 'saved', fileId: empty.id });
    expect((await listFileVersions(database.pool, empty.id))[0]).toMatchObject({
      partialReason: 'user_stopped',
    });

    const over = await saveAiBody(database.pool, {
      projectId,
      fileId: empty.id,
      baseVersion: 1,
      content: '又一截',
      runId,
      writeKey: key(),
      partialReason: 'provider_error',
    });
    expect(over).toMatchObject({ kind: 'drafted', reason: 'partial_over_text' });
    expect(await getFile(database.pool, projectId, empty.id)).toMatchObject({ content: '半截' });
  });

  it('saves a body for a file the author deleted as a draft instead of losing it', async () => {
    const file = await createFile(database.pool, {
      projectId,
      title: '四',
      fileType: 'outline',
      folder: '大纲',
    });
    await softDeleteFile(database.pool, projectId, file.id);
    const saved = await saveAiBody(database.pool, {
      projectId,
      fileId: file.id,
      baseVersion: 0,
      content: '大纲正文',
      runId,
      writeKey: key(),
    });
    expect(saved).toMatchObject({ kind: 'drafted', reason: 'file_deleted', fileType: 'outline' });
    const draft = (await listFiles(database.pool, projectId)).find((entry) => entry.id === saved.fileId);
    expect(draft).toMatchObject({ folder: '大纲', title: '四（AI 草稿）', content: '大纲正文' });
  });

  it('concurrent saves with one key make exactly one version', async () => {
    const file = await createFile(database.pool, { projectId, title: '五', fileType: 'draft' });
    const writeKey = key();
    const results = await Promise.allSettled(
      Array.from({ length: 4 }, () =>
        saveAiBody(database.pool, {
          projectId,
          fileId: file.id,
          baseVersion: 0,
          content: '同一段',
          runId,
          writeKey,
        }),
      ),
    );
    expect(results.some((result) => result.status === 'fulfilled')).toBe(true);
    expect(await listFileVersions(database.pool, file.id)).toHaveLength(1);
  });
});

describe('draft titles', () => {
  it('are the original title plus the suffix, numbered past the ones taken', () => {
    for (const title of ['第一章', 'A', '（AI 草稿）', '第一章（AI 草稿）']) {
      const used = new Set<string>();
      for (let taken = 0; taken < 5; taken++) {
        const next = draftTitle(title, used);
        expect(used.has(next)).toBe(false);
        expect(next.startsWith(title)).toBe(true);
        used.add(next);
      }
      expect([...used].slice(0, 2)).toEqual([`${title}（AI 草稿）`, `${title}（AI 草稿 2）`]);
    }
  });
});

describe('transient database errors', () => {
  it('classifies connection, capacity and serialization faults as transient, answers as not', () => {
    const withCode = (code: string) => Object.assign(new Error(code), { code });
    for (const code of ['08006', '08001', '53300', '57P01', '40001', '40P01', 'ECONNRESET', 'ECONNREFUSED']) {
      expect(isTransientDbError(withCode(code)), code).toBe(true);
    }
    expect(isTransientDbError(new Error('Connection terminated unexpectedly'))).toBe(true);
    for (const code of ['23505', '22P02', '42P01', '23503'])
      expect(isTransientDbError(withCode(code)), code).toBe(false);
    expect(isTransientDbError(new Error('run abc is done at epoch 1'))).toBe(false);
  });

  it('back-off grows, stays under its cap and never below half of its ceiling', () => {
    for (let attempt = 1; attempt <= 30; attempt++) {
      for (const random of [0, 0.25, 0.5, 0.999]) {
        const delay = retryDelay(attempt, 100, 2000, () => random);
        const ceiling = Math.min(2000, 100 * 2 ** (attempt - 1));
        expect(delay).toBeGreaterThanOrEqual(Math.floor(ceiling / 2));
        expect(delay).toBeLessThanOrEqual(ceiling);
      }
    }
  });

  it('retries a real connection refusal until the database answers, and gives up on a real answer', async () => {
    let tries = 0;
    const value = await retryTransient(
      async () => {
        tries++;
        // A port nothing listens on refuses like a restarting server; then the real database.
        if (tries < 3) {
          const { connect } = await import('node:net');
          await new Promise((_, reject) => connect(1, '127.0.0.1').once('error', reject));
        }
        return (await database.pool.query<{ one: number }>('SELECT 1 AS one')).rows[0]!.one;
      },
      { maxMs: 10_000, baseDelayMs: 5 },
    );
    expect({ value, tries }).toEqual({ value: 1, tries: 3 });
    let answers = 0;
    await expect(
      retryTransient(
        async () => {
          answers++;
          await database.pool.query('SELECT * FROM no_such_table');
        },
        { maxMs: 10_000, baseDelayMs: 5 },
      ),
    ).rejects.toMatchObject({ code: '42P01' });
    expect(answers).toBe(1);
  });
});
