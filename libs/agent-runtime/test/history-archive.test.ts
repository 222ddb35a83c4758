import { randomUUID } from 'node:crypto';
import type { TaskEnvelope } from '@quill/contracts';
import { getFile } from '@quill/db';
import { saveCompaction } from '@quill/db/context';
import { createProject, createSession, createUser } from '@quill/db/gateway';
import { createTestDatabase, type TestDatabase } from '@quill/db/testing';
import type { Pool } from 'pg';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testUrls } from '../../../test/support/urls.ts';
import { createHistoryArchiveWrite } from '../src/history-archive.ts';

let database: TestDatabase;
let userId: string;
let projectId: string;
const log = pino({ level: 'silent' });

beforeAll(async () => {
  database = await createTestDatabase({ serverUrl: testUrls.database });
  userId = (await createUser(database.pool, { email: 'archive@example.com', displayName: 'A' })).id;
  projectId = (await createProject(database.pool, { ownerId: userId, title: '雨夜' })).id;
});
afterAll(async () => {
  await database.drop();
});

async function taskIn(): Promise<TaskEnvelope> {
  const { sessionId } = await createSession(database.pool, { projectId, userId, title: '会话' });
  return {
    v: 1,
    run_id: randomUUID(),
    session_id: sessionId,
    project_id: projectId,
    user_id: userId,
    step: 0,
    role: 'writer',
    epoch: 0,
    generation_mode: 'fast',
    context: { message: '继续写', focus_file_id: null, attached_file_ids: [], ui_language: 'zh' },
  };
}

/** The pool, counting the statements sent through `pool.query` (a fresh session's read is one). */
function counting(pool: Pool): { pool: Pool; statements: () => number } {
  let statements = 0;
  const counted = new Proxy(pool, {
    get(target, key, receiver) {
      if (key === 'query')
        return (...args: Parameters<Pool['query']>) => {
          statements++;
          return (target.query as (...a: unknown[]) => unknown)(...args);
        };
      const value = Reflect.get(target, key, receiver);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  return { pool: counted, statements: () => statements };
}

describe("a step's history archive write", () => {
  it('reads nothing for a session the compile said was never compacted', async () => {
    const { pool, statements } = counting(database.pool);
    const archive = createHistoryArchiveWrite(pool, await taskIn(), log, { compacted: false });
    archive.start();
    await archive.settled();
    expect(statements()).toBe(0);
  });

  it('looks for unwritten sections when the compile did not say, and finds none in a fresh session', async () => {
    const { pool, statements } = counting(database.pool);
    const archive = createHistoryArchiveWrite(pool, await taskIn(), log);
    await archive.settled();
    expect(statements()).toBe(1);
  });

  it('writes the section of a compacted session', async () => {
    const task = await taskIn();
    const archiveFileId = randomUUID();
    await saveCompaction(database.pool, {
      sessionId: task.session_id,
      throughSeq: 0,
      summary: '前两轮：雨夜的气氛改冷了。',
      archiveFileId,
      archiveSection: '第1轮要求：把雨夜写得更冷一些',
      compactedMessages: 2,
    });
    await createHistoryArchiveWrite(database.pool, task, log, { compacted: true }).settled();
    expect((await getFile(database.pool, projectId, archiveFileId))?.content).toContain('第1轮要求');
  });
});
