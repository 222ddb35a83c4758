import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testUrls } from '../../../test/support/urls.ts';
import { appendMessage, createFile, createProject, createSession, createUser } from '../src/gateway/index.ts';
import { getFile, getMessageRouting, listWaitingRuns, projectHasAssistantReply } from '../src/index.ts';
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

describe('workflow storage', () => {
  it('merges routing JSON into a message, creating it when absent', async () => {
    const session = await createSession(database.pool, { projectId, userId, title: 's' });
    const message = await appendMessage(database.pool, {
      sessionId: session.sessionId,
      role: 'user',
      content: '写',
    });
    expect(await getMessageRouting(database.pool, message.id)).toBeNull();
    expect(
      await mergeMessageRouting(database.pool, message.id, { current_agent: 'writer', scope: 'a' }),
    ).toBe(true);
    await mergeMessageRouting(database.pool, message.id, { outcome: { reason: 'completed' } });
    expect(await getMessageRouting(database.pool, message.id)).toEqual({
      current_agent: 'writer',
      scope: 'a',
      outcome: { reason: 'completed' },
    });
    expect(await mergeMessageRouting(database.pool, 'not-a-uuid', {})).toBe(false);
  });

  it('knows whether a work already has an AI reply in any session', async () => {
    const project = await createProject(database.pool, { ownerId: userId, title: 'Fresh' });
    expect(await projectHasAssistantReply(database.pool, project.id)).toBe(false);
    const session = await createSession(database.pool, { projectId: project.id, userId, title: 's' });
    await appendMessage(database.pool, { sessionId: session.sessionId, role: 'user', content: 'hi' });
    expect(await projectHasAssistantReply(database.pool, project.id)).toBe(false);
    await appendMessage(database.pool, { sessionId: session.sessionId, role: 'assistant', content: 'hello' });
    expect(await projectHasAssistantReply(database.pool, project.id)).toBe(true);
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
