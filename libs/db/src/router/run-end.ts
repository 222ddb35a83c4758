import { checkTransition, type Phase, type PhaseSubject, phasesLeadingTo } from '@quill/contracts';
import { isUuid } from '../ids.ts';
import type { Queryable } from '../pool.ts';
import { type PhaseWrite, RUN_PHASE_SET_SQL, runPhaseColumnParams, setSessionPhase } from './phase-writes.ts';
import {
  ACTIVE_RUN_PHASES,
  endColumns,
  type FinishRunInput,
  finishRun,
  getActiveRunForSession,
} from './runs.ts';

/** What ending a run wrote: the run's move, and its session's when the session was to follow. */
export interface RunEnd {
  run: PhaseWrite;
  /**
   * Undefined when the session was left alone: the run did not move, never left `idle`, or
   * another run of the session is active.
   */
  session: PhaseWrite | undefined;
}

/**
 * Ends a run and lets its session follow, in one statement (docs/architecture.md "Phases"): the
 * run moves to its end phase by a compare-and-set on the phases the transition table lets lead
 * there, with the columns set alongside, and the session moves the same way unless the run never
 * left `idle` (it never took its session) or another run of the session is active (a lapsed lock
 * let the next one start; for a run resting `waiting_user`, a later active run). The verdicts are
 * the ones the step-by-step writes give (`unchanged` for a repeated end, `illegal` refused); a
 * compare-and-set that lost a race to a concurrent writer (the row was legal in the statement's
 * snapshot, not when it wrote) is done again step by step, which reads what that writer left.
 */
export async function endRunAndSession(
  db: Queryable,
  run: { runId: string; sessionId: string },
  input: FinishRunInput,
  options: { clarificationPending?: boolean } = {},
): Promise<RunEnd> {
  if (!isUuid(run.runId)) return { run: { kind: 'missing' }, session: undefined };
  const to = input.phase;
  const { rows } = await db.query<{
    run_before: Phase;
    run_moved: boolean;
    session_exists: boolean;
    session_before: Phase | null;
    session_follows: boolean;
    session_written: boolean;
  }>(
    `WITH found AS (
       SELECT phase, created_at FROM runs WHERE run_id = $1
     ), run AS (
       UPDATE runs SET ${RUN_PHASE_SET_SQL}
       WHERE run_id = $1 AND phase = ANY($3::text[])
       RETURNING run_id
     ), other AS (
       SELECT 1 FROM runs o
       WHERE o.session_id = $9 AND o.run_id <> $1 AND o.phase = ANY($10::text[])
         AND (NOT $11::boolean OR o.created_at > (SELECT created_at FROM found))
       LIMIT 1
     ), follows AS (
       SELECT EXISTS (SELECT 1 FROM run) AND (SELECT phase FROM found) <> 'idle'
         AND NOT EXISTS (SELECT 1 FROM other) AS yes
     ), session AS (
       UPDATE session_phases p SET phase = $2,
         clarification_pending = COALESCE($12, p.clarification_pending), updated_at = now()
       WHERE p.session_id = $9 AND (SELECT yes FROM follows)
         AND (p.phase = ANY($13::text[]) OR (p.phase = $2 AND $12::boolean IS NOT NULL))
       RETURNING p.session_id
     )
     SELECT f.phase AS run_before,
       EXISTS (SELECT 1 FROM run) AS run_moved,
       EXISTS (SELECT 1 FROM sessions s WHERE s.session_id = $9) AS session_exists,
       (SELECT p.phase FROM session_phases p WHERE p.session_id = $9) AS session_before,
       (SELECT yes FROM follows) AS session_follows,
       EXISTS (SELECT 1 FROM session) AS session_written
     FROM found f`,
    [
      run.runId,
      to,
      phasesLeadingTo('run', to),
      ...runPhaseColumnParams(endColumns(input)),
      run.sessionId,
      ACTIVE_RUN_PHASES,
      ACTIVE_RUN_PHASES.includes(to),
      options.clarificationPending ?? null,
      phasesLeadingTo('session', to),
    ],
  );
  const row = rows[0];
  if (!row) return { run: { kind: 'missing' }, session: undefined };
  const runWrite = verdict('run', row.run_before, to, row.run_moved);
  if (runWrite === 'raced') return endStepByStep(db, run, input, options);
  if (!row.session_follows) return { run: runWrite, session: undefined };
  if (!row.session_exists) return { run: runWrite, session: { kind: 'missing' } };
  // A session without a phase row has never run: `idle`.
  const sessionWrite = verdict('session', row.session_before ?? 'idle', to, row.session_written);
  if (sessionWrite !== 'raced') return { run: runWrite, session: sessionWrite };
  return { run: runWrite, session: await setSessionPhase(db, run.sessionId, to, options) };
}

/**
 * What a compare-and-set from `before` to `to` means; `raced` when the move was legal from what
 * the statement's snapshot saw but nothing was written (a concurrent writer got there first).
 */
function verdict(subject: PhaseSubject, before: Phase, to: Phase, moved: boolean): PhaseWrite | 'raced' {
  // Already there: a repeated end, or a session whose flag alone was written.
  if (before === to) return { kind: 'unchanged', phase: before };
  if (moved) return { kind: 'applied', from: before, to };
  const transition = checkTransition(subject, before, to);
  if (transition.kind === 'unchanged') return { kind: 'unchanged', phase: before };
  if (transition.kind === 'illegal') return { kind: 'illegal', from: before, to };
  return 'raced';
}

/** The same end as separate reads and compare-and-sets, each retried on a lost race. */
async function endStepByStep(
  db: Queryable,
  run: { runId: string; sessionId: string },
  input: FinishRunInput,
  options: { clarificationPending?: boolean },
): Promise<RunEnd> {
  const write = await finishRun(db, run.runId, input);
  if (write.kind !== 'applied' || write.from === 'idle') return { run: write, session: undefined };
  const other = await getActiveRunForSession(db, run.sessionId);
  if (other && other.runId !== run.runId) return { run: write, session: undefined };
  return { run: write, session: await setSessionPhase(db, run.sessionId, input.phase, options) };
}
