import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testUrls } from '../../../test/support/urls.ts';
import { appendMessage, createFile, createProject, createSession, createUser } from '../src/gateway/index.ts';
import { getFile, listWaitingRuns, readRoutingContext } from '../src/index.ts';
import { createRun, finishRun, mergeMessageRouting, startRun } from '../src/router/index.ts';
import { createTestDatabase, type TestDatabase } from '../src/testing.ts';
import { deleteEmptyFiles } from '../src/workers/index.ts';

let database: TestDatabase;
let userId: string;
let projectId: string;

beforeAll(async () => {
  database = await createTestDatabase({ serverUrl: testUrls.database });
  userId = (await createUser(database.pool, { email: 'r@example.com', displayName: 'R' })).id;
  projectId = (await createProject(database.pool, { ownerId: userId, title: 'Routing' })).id;
});
afterAll(async () => {
  await database.drop();
});

/** The routing context of a run whose message is `messageId` (its own run id is fresh). */
function contextOf(sessionId: string, messageId: string, project = projectId) {
  return readRoutingContext(database.pool, { sessionId, messageId, runId: randomUUID(), projectId: project });
}

describe('workflow storage', () => {
  it('merges routing JSON into a message, creating it when absent', async () => {
    const session = await createSession(database.pool, { projectId, userId, title: 's' });
    const message = await appendMessage(database.pool, {
      sessionId: session.sessionId,
      role: 'user',
      content: '写',
    });
    const storedRouting = async () => (await contextOf(session.sessionId, message.id)).storedRouting;
    expect(await storedRouting()).toBeNull();
    expect(
      await mergeMessageRouting(database.pool, message.id, { current_agent: 'writer', scope: 'a' }),
    ).toBe(true);
    await mergeMessageRouting(database.pool, message.id, { outcome: { reason: 'completed' } });
    expect(await storedRouting()).toEqual({
      current_agent: 'writer',
      scope: 'a',
      outcome: { reason: 'completed' },
    });
    expect(await mergeMessageRouting(database.pool, 'not-a-uuid', {})).toBe(false);
  });

  it('knows whether a work already has an AI reply in any session', async () => {
    const project = await createProject(database.pool, { ownerId: userId, title: 'Fresh' });
    const first = await createSession(database.pool, { projectId: project.id, userId, title: 's' });
    const asked = await appendMessage(database.pool, {
      sessionId: first.sessionId,
      role: 'user',
      content: 'hi',
    });
    const answered = async () => (await contextOf(first.sessionId, asked.id, project.id)).answeredBefore;
    expect(await answered()).toBe(false);
    // A reply in another session of the work counts too.
    const other = await createSession(database.pool, { projectId: project.id, userId, title: 't' });
    await appendMessage(database.pool, { sessionId: other.sessionId, role: 'assistant', content: 'hello' });
    expect(await answered()).toBe(true);
  });

  it('reads the previous reply and the earlier routings before the run message, in path order', async () => {
    const session = await createSession(database.pool, { projectId, userId, title: 'history' });
    const append = (role: 'user' | 'assistant', content: string, routing?: unknown) =>
      appendMessage(database.pool, { sessionId: session.sessionId, role, content, routing });
    await append('user', '一', { current_agent: 'planner', n: 1 });
    await append('assistant', '第一次回复');
    await append('user', '二');
    await append('user', '三', { current_agent: 'writer', n: 3 });
    await append('assistant', '第二次回复');
    const current = await append('user', '四');
    // Written after the run's message (a takeover reads again once its reply is stored): not before it.
    await append('assistant', '当前回复');
    await append('user', '五', { current_agent: 'writer', n: 5 });

    const context = await contextOf(session.sessionId, current.id);
    expect(context.previousAssistant).toBe('第二次回复');
    expect(context.priorRoutings).toEqual([
      { current_agent: 'planner', n: 1 },
      { current_agent: 'writer', n: 3 },
    ]);
    expect(context.storedRouting).toBeNull();
    expect(context.clarificationPending).toBe(false);

    // A message that is not on the path (or not among its latest messages): every other run's counts.
    const unknown = await contextOf(session.sessionId, randomUUID());
    expect(unknown.previousAssistant).toBe('当前回复');
    expect(unknown.priorRoutings).toHaveLength(3);

    // Nothing before the session's first message; bad ids read as absent, not as an error.
    const empty = await createSession(database.pool, { projectId, userId, title: 'empty' });
    const only = await appendMessage(database.pool, {
      sessionId: empty.sessionId,
      role: 'user',
      content: 'x',
    });
    expect(await contextOf(empty.sessionId, only.id)).toMatchObject({
      previousAssistant: undefined,
      priorRoutings: [],
    });
    expect(await contextOf('not-a-uuid', 'nor-this', 'nor-that')).toEqual({
      storedRouting: null,
      previousAssistant: undefined,
      priorRoutings: [],
      clarificationPending: false,
      answeredBefore: false,
    });
  });

  it('reads a pending clarification from the session phase', async () => {
    const session = await createSession(database.pool, { projectId, userId, title: 'clarify' });
    const message = await appendMessage(database.pool, {
      sessionId: session.sessionId,
      role: 'user',
      content: '改',
    });
    expect((await contextOf(session.sessionId, message.id)).clarificationPending).toBe(false);
    await database.pool.query(
      `INSERT INTO session_phases (session_id, phase, clarification_pending) VALUES ($1, 'waiting_user', true)`,
      [session.sessionId],
    );
    expect((await contextOf(session.sessionId, message.id)).clarificationPending).toBe(true);
  });

  it('lists the runs left waiting for the author, except the answering one', async () => {
    const session = await createSession(database.pool, { projectId, userId, title: 'w' });
    const base = { sessionId: session.sessionId, projectId, userId, generationMode: 'fast' as const };
    const waiting = await createRun(database.pool, { ...base, runId: randomUUID() });
    await startRun(database.pool, waiting.runId);
    await finishRun(database.pool, waiting.runId, { phase: 'waiting_user', stopReason: 'waiting_user' });
    const answering = await createRun(database.pool, { ...base, runId: randomUUID() });
    await startRun(database.pool, answering.runId);
    expect(await listWaitingRuns(database.pool, session.sessionId, answering.runId)).toEqual([waiting.runId]);
    expect(await listWaitingRuns(database.pool, session.sessionId, waiting.runId)).toEqual([]);
  });

  it('rolls back only files that are still empty and never written', async () => {
    const empty = await createFile(database.pool, { projectId, title: '空', fileType: 'draft' });
    const written = await createFile(database.pool, {
      projectId,
      title: '有字',
      fileType: 'draft',
      content: '正文',
    });
    const rolledBack = await deleteEmptyFiles(database.pool, projectId, [empty.id, written.id, 'junk']);
    expect(rolledBack).toEqual([empty.id]);
    expect(await getFile(database.pool, projectId, empty.id)).toBeNull();
    expect(await getFile(database.pool, projectId, written.id)).not.toBeNull();
  });
});
