import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testUrls } from '../../../test/support/urls.ts';
import { ensureQuotaAccount } from '../src/billing/index.ts';
import { appendMessage, createProject, createSession, createUser } from '../src/gateway/index.ts';
import { listSessions } from '../src/gateway/sessions.ts';
import { getCredits, getSessionForUser, listMessages } from '../src/index.ts';
import { setSessionPhase } from '../src/router/index.ts';
import { createTestDatabase, type TestDatabase } from '../src/testing.ts';

let database: TestDatabase;
let userId: string;
let otherUserId: string;
let projectId: string;

beforeAll(async () => {
  database = await createTestDatabase({ serverUrl: testUrls.database });
  userId = (await createUser(database.pool, { email: 'a@example.com', displayName: 'A' })).id;
  otherUserId = (await createUser(database.pool, { email: 'b@example.com', displayName: 'B' })).id;
  projectId = (await createProject(database.pool, { ownerId: userId, title: 'Sessions' })).id;
});
afterAll(async () => {
  await database.drop();
});

describe('sessions', () => {
  it('returns a session only to its owner and tracks its phase', async () => {
    const session = await createSession(database.pool, { projectId, userId, title: '第一次对话' });
    expect(session).toMatchObject({ phase: 'idle', clarificationPending: false, title: '第一次对话' });
    expect(await getSessionForUser(database.pool, session.sessionId, otherUserId)).toBeNull();
    expect(await getSessionForUser(database.pool, 'nope', userId)).toBeNull();

    // idle → waiting_user is not in the transition table: refused, nothing written.
    expect(
      await setSessionPhase(database.pool, session.sessionId, 'waiting_user', { clarificationPending: true }),
    ).toEqual({ kind: 'illegal', from: 'idle', to: 'waiting_user' });
    expect((await getSessionForUser(database.pool, session.sessionId, userId))?.phase).toBe('idle');
    expect(await setSessionPhase(database.pool, session.sessionId, 'running')).toEqual({
      kind: 'applied',
      from: 'idle',
      to: 'running',
    });
    expect(
      await setSessionPhase(database.pool, session.sessionId, 'waiting_user', { clarificationPending: true }),
    ).toEqual({ kind: 'applied', from: 'running', to: 'waiting_user' });
    expect(await getSessionForUser(database.pool, session.sessionId, userId)).toMatchObject({
      phase: 'waiting_user',
      clarificationPending: true,
    });
    expect((await listSessions(database.pool, projectId, userId)).map((row) => row.sessionId)).toContain(
      session.sessionId,
    );
    expect(await listSessions(database.pool, projectId, otherUserId)).toEqual([]);
    // The author answers: the next run takes the session back to running and consumes the flag.
    expect(
      await setSessionPhase(database.pool, session.sessionId, 'running', { clarificationPending: false }),
    ).toMatchObject({ kind: 'applied' });
    expect(await setSessionPhase(database.pool, session.sessionId, 'done')).toMatchObject({
      kind: 'applied',
    });
    expect(await getSessionForUser(database.pool, session.sessionId, userId)).toMatchObject({
      phase: 'done',
      clarificationPending: false,
    });
  });
});

describe('messages', () => {
  it('lists the latest messages oldest first, with JSON columns intact', async () => {
    const session = await createSession(database.pool, { projectId, userId, title: 'history' });
    const runId = crypto.randomUUID();
    for (let index = 0; index < 5; index++) {
      await appendMessage(database.pool, {
        sessionId: session.sessionId,
        runId: index % 2 ? runId : null,
        role: index % 2 ? 'assistant' : 'user',
        content: `m${index}`,
        routing: index % 2 ? { roles: ['writer'], mode: 'fast' } : undefined,
        breadcrumbs: index % 2 ? ['planner', 'writer'] : undefined,
      });
    }
    const latest = await listMessages(database.pool, session.sessionId, { limit: 3 });
    expect(latest.map((message) => message.content)).toEqual(['m2', 'm3', 'm4']);
    expect(latest[1]).toMatchObject({
      role: 'assistant',
      runId,
      routing: { roles: ['writer'], mode: 'fast' },
      breadcrumbs: ['planner', 'writer'],
    });
    expect(latest[0]).toMatchObject({ role: 'user', runId: null, routing: null, breadcrumbs: null });
    const stamps = latest.map((message) => message.createdAt);
    expect([...stamps].sort()).toEqual(stamps);
  });
});

describe('quota', () => {
  it('opens an account once and keeps the balance afterwards', async () => {
    expect(await getCredits(database.pool, otherUserId)).toBeNull();
    expect(await ensureQuotaAccount(database.pool, otherUserId, 10)).toBe(10);
    await database.pool.query('UPDATE quota_accounts SET credits = 7 WHERE user_id = $1', [otherUserId]);
    expect(await ensureQuotaAccount(database.pool, otherUserId, 10)).toBe(7);
    expect(await getCredits(database.pool, otherUserId)).toBe(7);
  });
});
