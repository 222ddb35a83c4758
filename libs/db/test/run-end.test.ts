import type { Phase } from '@quill/contracts';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testUrls } from '../../../test/support/urls.ts';
import {
  createFile,
  createProject,
  createSession,
  createUser,
  recordAiArtifact,
} from '../src/gateway/index.ts';
import type { FinishRunInput } from '../src/index.ts';
import { appendMessage, createRun, endRunAndSession } from '../src/router/index.ts';
import { endStepByStep, type RunEndOptions } from '../src/router/run-end.ts';
import { createTestDatabase, type TestDatabase } from '../src/testing.ts';

let database: TestDatabase;
let userId: string;
let projectId: string;

beforeAll(async () => {
  database = await createTestDatabase({ serverUrl: testUrls.database });
  userId = (await createUser(database.pool, { email: 'run-end@example.com', displayName: 'End' })).id;
  projectId = (await createProject(database.pool, { ownerId: userId, title: 'End' })).id;
});
afterAll(async () => {
  await database.drop();
});

const RUN_PHASES: Phase[] = ['idle', 'running', 'waiting_user', 'done', 'error'];

interface Scenario {
  runPhase: Phase;
  /** The session's phase row; null: none (a session that never ran). */
  sessionPhase: Phase | null;
  clarificationPending: boolean;
  /** Another run of the session, opened before or after this one. */
  other: { phase: Phase; openedAfter: boolean } | null;
  to: FinishRunInput['phase'];
  flag: boolean | undefined;
  /** AI output an earlier run of the session left: undecided (open) or accepted. */
  artifact: 'open' | 'accepted' | null;
  reply: { content: string; breadcrumbs?: unknown } | undefined;
  acceptance: boolean;
  /** The routing outcome for the author's message (which the scenario writes), or none. */
  routed: boolean;
}

/** The scenario's rows, in a session of its own; returns this run's and its session's ids. */
async function build(scenario: Scenario): Promise<{ runId: string; sessionId: string; messageId: string }> {
  const { pool } = database;
  const sessionId = (await createSession(pool, { projectId, userId, title: 'end' })).sessionId;
  const open = async (phase: Phase) => {
    const runId = crypto.randomUUID();
    await createRun(pool, { runId, sessionId, projectId, userId, generationMode: 'fast' });
    await pool.query('UPDATE runs SET phase = $2 WHERE run_id = $1', [runId, phase]);
    return runId;
  };
  if (scenario.other && !scenario.other.openedAfter) await open(scenario.other.phase);
  const runId = await open(scenario.runPhase);
  if (scenario.other?.openedAfter) {
    // A later created_at than this run's, whatever the clock's resolution.
    const otherId = await open(scenario.other.phase);
    await pool.query(
      `UPDATE runs SET created_at = (SELECT created_at FROM runs WHERE run_id = $2) + interval '1 ms' WHERE run_id = $1`,
      [otherId, runId],
    );
  }
  if (scenario.artifact) {
    const earlier = await open('done');
    const file = await createFile(pool, { projectId, title: 'draft', fileType: 'chapter', content: '雨夜' });
    await recordAiArtifact(pool, {
      projectId,
      runId: earlier,
      fileId: null,
      textFileId: file.id,
      placement: 'draft',
      version: 1,
      baseVersion: null,
    });
    if (scenario.artifact === 'accepted')
      await pool.query("UPDATE artifacts SET state = 'accepted' WHERE run_id = $1", [earlier]);
  }
  const messageId = crypto.randomUUID();
  await appendMessage(pool, { id: messageId, sessionId, runId, role: 'user', content: '写第一章' });
  if (scenario.sessionPhase) {
    await pool.query(
      'INSERT INTO session_phases (session_id, phase, clarification_pending) VALUES ($1, $2, $3)',
      [sessionId, scenario.sessionPhase, scenario.clarificationPending],
    );
  }
  return { runId, sessionId, messageId };
}

/** What the end left: the run's row (its end columns) and the session's phase row. */
async function state(run: { runId: string; sessionId: string }) {
  const { rows: runs } = await database.pool.query(
    `SELECT phase, stop_reason, error_code, billing_decision, model_calls, tool_calls, ended_at IS NOT NULL AS ended
     FROM runs WHERE run_id = $1`,
    [run.runId],
  );
  const { rows: sessions } = await database.pool.query(
    'SELECT phase, clarification_pending FROM session_phases WHERE session_id = $1',
    [run.sessionId],
  );
  const { rows: replies } = await database.pool.query(
    `SELECT role, content, breadcrumbs, routing FROM messages WHERE run_id = $1 ORDER BY created_at`,
    [run.runId],
  );
  return { run: runs[0], session: sessions[0] ?? null, replies };
}

const phase = fc.constantFrom(...RUN_PHASES);
const scenario: fc.Arbitrary<Scenario> = fc.record({
  runPhase: phase,
  sessionPhase: fc.option(phase, { nil: null }),
  clarificationPending: fc.boolean(),
  other: fc.option(fc.record({ phase, openedAfter: fc.boolean() }), { nil: null }),
  to: fc.constantFrom('done', 'error', 'waiting_user'),
  flag: fc.option(fc.boolean(), { nil: undefined }),
  artifact: fc.constantFrom('open' as const, 'accepted' as const, null),
  reply: fc.option(
    fc.record(
      {
        content: fc.constantFrom('', '第一章写好了。'),
        breadcrumbs: fc.constant([{ file: '第一章', op: 'created' }]),
      },
      { requiredKeys: ['content'] },
    ),
    { nil: undefined },
  ),
  acceptance: fc.boolean(),
  routed: fc.boolean(),
});

/** A running run of a running session, ended `done`, with nothing else around it. */
const RUNNING_TO_DONE: Scenario = {
  runPhase: 'running',
  sessionPhase: 'running',
  clarificationPending: false,
  other: null,
  to: 'done',
  flag: undefined,
  artifact: null,
  reply: undefined,
  acceptance: false,
  routed: false,
};

describe('ending a run in one statement', () => {
  it('writes and answers what the step-by-step end does, from any run and session phases', async () => {
    await fc.assert(
      fc.asyncProperty(scenario, async (given) => {
        const input: FinishRunInput = {
          phase: given.to,
          stopReason: 'completed',
          billingDecision: 'charge',
          modelCalls: 2,
          toolCalls: 1,
          ...(given.to === 'error' ? { errorCode: 'model_error' } : {}),
        };
        const options: RunEndOptions = {
          ...(given.flag === undefined ? {} : { clarificationPending: given.flag }),
          ...(given.reply ? { reply: given.reply } : {}),
          acceptance: given.acceptance,
        };
        const [one, reference] = [await build(given), await build(given)];
        const routing = (run: { messageId: string }) =>
          given.routed
            ? { routing: { messageId: run.messageId, patch: { outcome: { reason: 'completed' } } } }
            : {};
        const ended = await endRunAndSession(database.pool, one, input, { ...options, ...routing(one) });
        const expected = await endStepByStep(database.pool, reference, input, {
          ...options,
          ...routing(reference),
        });
        expect(ended).toEqual(expected);
        expect(await state(one)).toEqual(await state(reference));
      }),
      { numRuns: 120 },
    );
  });

  it('moves the run and its session to done, and a repeated end changes nothing', async () => {
    const run = await build(RUNNING_TO_DONE);
    const input: FinishRunInput = { phase: 'done', stopReason: 'completed', modelCalls: 1, toolCalls: 0 };
    expect(await endRunAndSession(database.pool, run, input, { reply: { content: '写好了。' } })).toEqual({
      run: { kind: 'applied', from: 'running', to: 'done' },
      session: { kind: 'applied', from: 'running', to: 'done' },
      replyStored: true,
      awaitsAcceptance: false,
    });
    expect(await state(run)).toMatchObject({
      run: { phase: 'done', ended: true },
      session: { phase: 'done' },
    });
    // A takeover that finds the run ended stores the reply no second time.
    expect(await endRunAndSession(database.pool, run, input, { reply: { content: '写好了。' } })).toEqual({
      run: { kind: 'unchanged', phase: 'done' },
      session: undefined,
      replyStored: false,
      awaitsAcceptance: false,
    });
    expect((await state(run)).replies).toEqual([
      { role: 'user', content: '写第一章', breadcrumbs: null, routing: null },
      { role: 'assistant', content: '写好了。', breadcrumbs: null, routing: null },
    ]);
    expect(await endRunAndSession(database.pool, { ...run, runId: crypto.randomUUID() }, input)).toEqual({
      run: { kind: 'missing' },
      session: undefined,
      replyStored: false,
      awaitsAcceptance: false,
    });
  });

  it('answers whether AI output of the session waits for the author, only when asked', async () => {
    const given: Scenario = { ...RUNNING_TO_DONE, artifact: 'open', acceptance: true };
    const input: FinishRunInput = { phase: 'done', stopReason: 'completed', modelCalls: 1, toolCalls: 0 };
    const asked = await endRunAndSession(database.pool, await build(given), input, { acceptance: true });
    expect(asked).toMatchObject({ replyStored: false, awaitsAcceptance: true });
    const unasked = await endRunAndSession(database.pool, await build(given), input);
    expect(unasked).toMatchObject({ replyStored: false, awaitsAcceptance: false });
    const decided = await build({ ...given, artifact: 'accepted' });
    expect(await endRunAndSession(database.pool, decided, input, { acceptance: true })).toMatchObject({
      awaitsAcceptance: false,
    });
  });
});
