import type { Phase } from '@quill/contracts';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testUrls } from '../../../test/support/urls.ts';
import { createProject, createSession, createUser } from '../src/gateway/index.ts';
import { type FinishRunInput, getActiveRunForSession } from '../src/index.ts';
import { createRun, endRunAndSession, finishRun, setSessionPhase } from '../src/router/index.ts';
import type { RunEnd } from '../src/router/run-end.ts';
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
}

/** The scenario's rows, in a session of its own; returns this run's and its session's ids. */
async function build(scenario: Scenario): Promise<{ runId: string; sessionId: string }> {
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
  if (scenario.sessionPhase) {
    await pool.query(
      'INSERT INTO session_phases (session_id, phase, clarification_pending) VALUES ($1, $2, $3)',
      [sessionId, scenario.sessionPhase, scenario.clarificationPending],
    );
  }
  return { runId, sessionId };
}

/** The reference: the run's end as separate reads and compare-and-sets. */
async function endStepByStep(
  run: { runId: string; sessionId: string },
  input: FinishRunInput,
  options: { clarificationPending?: boolean },
): Promise<RunEnd> {
  const write = await finishRun(database.pool, run.runId, input);
  if (write.kind !== 'applied' || write.from === 'idle') return { run: write, session: undefined };
  const other = await getActiveRunForSession(database.pool, run.sessionId);
  if (other && other.runId !== run.runId) return { run: write, session: undefined };
  return { run: write, session: await setSessionPhase(database.pool, run.sessionId, input.phase, options) };
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
  return { run: runs[0], session: sessions[0] ?? null };
}

const phase = fc.constantFrom(...RUN_PHASES);
const scenario: fc.Arbitrary<Scenario> = fc.record({
  runPhase: phase,
  sessionPhase: fc.option(phase, { nil: null }),
  clarificationPending: fc.boolean(),
  other: fc.option(fc.record({ phase, openedAfter: fc.boolean() }), { nil: null }),
  to: fc.constantFrom('done', 'error', 'waiting_user'),
  flag: fc.option(fc.boolean(), { nil: undefined }),
});

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
        const options = given.flag === undefined ? {} : { clarificationPending: given.flag };
        const [one, reference] = [await build(given), await build(given)];
        const ended = await endRunAndSession(database.pool, one, input, options);
        const expected = await endStepByStep(reference, input, options);
        expect(ended).toEqual(expected);
        expect(await state(one)).toEqual(await state(reference));
      }),
      { numRuns: 120 },
    );
  });

  it('moves the run and its session to done, and a repeated end changes nothing', async () => {
    const run = await build({
      runPhase: 'running',
      sessionPhase: 'running',
      clarificationPending: false,
      other: null,
      to: 'done',
      flag: undefined,
    });
    const input: FinishRunInput = { phase: 'done', stopReason: 'completed', modelCalls: 1, toolCalls: 0 };
    expect(await endRunAndSession(database.pool, run, input)).toEqual({
      run: { kind: 'applied', from: 'running', to: 'done' },
      session: { kind: 'applied', from: 'running', to: 'done' },
    });
    expect(await state(run)).toMatchObject({
      run: { phase: 'done', ended: true },
      session: { phase: 'done' },
    });
    expect(await endRunAndSession(database.pool, run, input)).toEqual({
      run: { kind: 'unchanged', phase: 'done' },
      session: undefined,
    });
    expect(await endRunAndSession(database.pool, { ...run, runId: crypto.randomUUID() }, input)).toEqual({
      run: { kind: 'missing' },
      session: undefined,
    });
  });
});
