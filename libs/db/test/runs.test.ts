import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testUrls } from '../../../test/support/urls.ts';
import { createProject, createSession, createUser } from '../src/gateway/index.ts';
import { getActiveRunForSession, getRun, getRunForUser } from '../src/index.ts';
import {
  createRun,
  finishRun,
  setSessionPhase,
  startRun as takeRun,
  takeRun as takeRunAndSession,
} from '../src/router/index.ts';
import { createTestDatabase, type TestDatabase } from '../src/testing.ts';
import { bumpRunEpoch } from '../src/workers/index.ts';

let database: TestDatabase;
let userId: string;
let projectId: string;
let sessionId: string;

beforeAll(async () => {
  database = await createTestDatabase({ serverUrl: testUrls.database });
  userId = (await createUser(database.pool, { email: 'runs@example.com', displayName: 'Runs' })).id;
  projectId = (await createProject(database.pool, { ownerId: userId, title: 'Runs' })).id;
  sessionId = (await createSession(database.pool, { projectId, userId, title: 'chat' })).sessionId;
});
afterAll(async () => {
  await database.drop();
});

/** A run as the router leaves it once it took it: opened `idle`, then `running`. */
async function startRun() {
  const opened = await createRun(database.pool, {
    runId: crypto.randomUUID(),
    sessionId,
    projectId,
    userId,
    generationMode: 'fast',
  });
  expect(opened.phase).toBe('idle');
  expect(await takeRun(database.pool, opened.runId)).toEqual({
    kind: 'applied',
    from: 'idle',
    to: 'running',
  });
  return (await getRun(database.pool, opened.runId))!;
}

describe('runs', () => {
  it('opens an idle run, taken to running once, at epoch 0, idempotently', async () => {
    const run = await startRun();
    expect(run).toMatchObject({
      phase: 'running',
      epoch: 0,
      modelCalls: 0,
      endedAt: null,
      generationMode: 'fast',
    });
    expect(run.createdAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
    expect(await createRun(database.pool, { ...run, generationMode: 'quality' })).toEqual(run);
    expect(await getRunForUser(database.pool, run.runId, userId)).toEqual(run);
    expect(await getRunForUser(database.pool, run.runId, crypto.randomUUID())).toBeNull();
  });

  it('opens a run once when the same open arrives several times at once; each caller gets the row', async () => {
    const input = {
      runId: crypto.randomUUID(),
      sessionId,
      projectId,
      userId,
      generationMode: 'fast' as const,
    };
    const opened = await Promise.all(Array.from({ length: 6 }, () => createRun(database.pool, input)));
    for (const run of opened) expect(run).toEqual(opened[0]);
    expect(opened[0]).toMatchObject({ runId: input.runId, phase: 'idle', epoch: 0 });
    const { rows } = await database.pool.query('SELECT count(*) AS runs FROM runs WHERE run_id = $1', [
      input.runId,
    ]);
    expect(rows).toEqual([{ runs: 1 }]);
  });

  it('finishes a run exactly once', async () => {
    const run = await startRun();
    expect(await getActiveRunForSession(database.pool, sessionId)).not.toBeNull();
    expect(
      await finishRun(database.pool, run.runId, {
        phase: 'done',
        stopReason: 'complete',
        modelCalls: 3,
        toolCalls: 2,
      }),
    ).toMatchObject({ kind: 'applied', from: 'running' });
    // Ended is final: a second, different end is refused by the transition table, not applied.
    expect(await finishRun(database.pool, run.runId, { phase: 'error', errorCode: 'model_error' })).toEqual({
      kind: 'illegal',
      from: 'done',
      to: 'error',
    });
    expect(await finishRun(database.pool, run.runId, { phase: 'done' })).toEqual({
      kind: 'unchanged',
      phase: 'done',
    });
    expect(await takeRun(database.pool, run.runId)).toEqual({ kind: 'illegal', from: 'done', to: 'running' });
    const finished = await getRun(database.pool, run.runId);
    expect(finished).toMatchObject({
      phase: 'done',
      stopReason: 'complete',
      errorCode: null,
      modelCalls: 3,
      toolCalls: 2,
    });
    expect(finished?.endedAt).not.toBeNull();
  });

  it('lets a run waiting for the user finish later', async () => {
    const run = await startRun();
    expect(
      await finishRun(database.pool, run.runId, { phase: 'waiting_user', stopReason: 'clarification' }),
    ).toMatchObject({ kind: 'applied' });
    expect((await getRun(database.pool, run.runId))?.endedAt).toBeNull();
    expect(await finishRun(database.pool, run.runId, { phase: 'done' })).toMatchObject({ kind: 'applied' });
    expect(await getRun(database.pool, run.runId)).toMatchObject({
      phase: 'done',
      stopReason: 'clarification',
    });
  });

  it('never finishes a run a router has not taken (idle → done is not in the table)', async () => {
    const opened = await createRun(database.pool, {
      runId: crypto.randomUUID(),
      sessionId,
      projectId,
      userId,
      generationMode: 'fast',
    });
    expect(await finishRun(database.pool, opened.runId, { phase: 'done' })).toEqual({
      kind: 'illegal',
      from: 'idle',
      to: 'done',
    });
    expect((await getRun(database.pool, opened.runId))?.phase).toBe('idle');
    expect(await finishRun(database.pool, crypto.randomUUID(), { phase: 'done' })).toEqual({
      kind: 'missing',
    });
  });

  it('bumps the epoch only while the run is running', async () => {
    const run = await startRun();
    expect(await bumpRunEpoch(database.pool, run.runId)).toBe(1);
    expect(await bumpRunEpoch(database.pool, run.runId)).toBe(2);
    await finishRun(database.pool, run.runId, { phase: 'done' });
    expect(await bumpRunEpoch(database.pool, run.runId)).toBeNull();
    expect(await bumpRunEpoch(database.pool, crypto.randomUUID())).toBeNull();
  });
});

describe('takeRun', () => {
  it('takes run and session in one statement, with the verdicts of the transition table', async () => {
    const session = (await createSession(database.pool, { projectId, userId, title: 'take' })).sessionId;
    const open = () =>
      createRun(database.pool, {
        runId: crypto.randomUUID(),
        sessionId: session,
        projectId,
        userId,
        generationMode: 'fast',
      });
    const sessionPhase = async () =>
      (
        await database.pool.query<{ phase: string }>(
          'SELECT phase FROM session_phases WHERE session_id = $1',
          [session],
        )
      ).rows[0]?.phase;
    // A session that never ran has no phase row: `idle`.
    const first = await open();
    expect(await takeRunAndSession(database.pool, first.runId)).toMatchObject({
      // The row as the router found it.
      found: { runId: first.runId, sessionId: session, phase: 'idle', epoch: 0 },
      run: { kind: 'applied', from: 'idle', to: 'running' },
      session: { kind: 'applied', from: 'idle', to: 'running' },
    });
    expect(await getRun(database.pool, first.runId)).toMatchObject({ phase: 'running' });
    expect(await sessionPhase()).toBe('running');
    // A takeover finds both running: unchanged, nothing written for the session.
    expect(await takeRunAndSession(database.pool, first.runId)).toMatchObject({
      found: { phase: 'running' },
      run: { kind: 'unchanged', phase: 'running' },
      session: undefined,
    });
    // An ended run is refused and leaves its session where it rests.
    await finishRun(database.pool, first.runId, { phase: 'done', stopReason: 'completed' });
    await setSessionPhase(database.pool, session, 'done');
    expect(await takeRunAndSession(database.pool, first.runId)).toMatchObject({
      found: { phase: 'done' },
      run: { kind: 'illegal', from: 'done', to: 'running' },
      session: undefined,
    });
    expect(await sessionPhase()).toBe('done');
    // The next run moves the resting session again.
    const next = await open();
    expect(await takeRunAndSession(database.pool, next.runId)).toMatchObject({
      run: { kind: 'applied', from: 'idle', to: 'running' },
      session: { kind: 'applied', from: 'done', to: 'running' },
    });
    expect(await takeRunAndSession(database.pool, crypto.randomUUID())).toEqual({
      found: null,
      run: { kind: 'missing' },
      session: undefined,
    });
  });
});
