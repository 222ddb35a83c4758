import { checkTransition, type Phase, type PhaseSubject, phasesLeadingTo } from '@quill/contracts';
import { isUuid } from '../ids.ts';
import type { Queryable } from '../pool.ts';
import {
  OPEN_ARTIFACT_STATES,
  sessionAwaitsAcceptance,
  sessionAwaitsAcceptanceSql,
} from '../shared-tables/artifacts.ts';
import { appendMessage, assistantReplyInsertSql, messageJson } from '../shared-tables/messages.ts';
import { mergeMessageRouting, messageRoutingMergeSql } from '../shared-tables/routing.ts';
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
  /** The round's reply went into the session's history with the end: the run moved here. */
  replyStored: boolean;
  /** Asked for (`acceptance`), and the run moved here: AI output of the session waits for the author. */
  awaitsAcceptance: boolean;
}

/** What a run's end writes and reads besides the phases, in the same statement. */
export interface RunEndOptions {
  clarificationPending?: boolean;
  /**
   * The round's reply (the assistant's message of the session's history), stored only by the end
   * that moves the run: a repeated end (a takeover that finds the run ended) stores nothing.
   */
  reply?: { content: string; breadcrumbs?: unknown };
  /** Whether to answer `awaitsAcceptance` (a run that ended in an error or a question does not ask). */
  acceptance?: boolean;
  /**
   * The round's routing outcome, merged into the routing JSON of the author's message (the next
   * run's routing inherits from it). Written with every end, a repeated one included: the merge
   * is idempotent, and a run whose end failed is finished again by a takeover, this included.
   */
  routing?: { messageId: string; patch: Record<string, unknown> };
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
 * The round's routing outcome goes onto the author's message in the same statement, and its
 * reply into the session's history, only if the run moved in it, so a router dying after the end
 * cannot leave a finished round without either; whether AI output waits for the author is read
 * alongside (docs/architecture.md "Phases").
 */
export async function endRunAndSession(
  db: Queryable,
  run: { runId: string; sessionId: string },
  input: FinishRunInput,
  options: RunEndOptions = {},
): Promise<RunEnd> {
  if (!isUuid(run.runId)) return { run: { kind: 'missing' }, session: undefined, ...NOTHING_ELSE };
  const to = input.phase;
  const { rows } = await db.query<{
    run_before: Phase;
    run_moved: boolean;
    session_exists: boolean;
    session_before: Phase | null;
    session_follows: boolean;
    session_written: boolean;
    reply_stored: boolean;
    awaits_acceptance: boolean;
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
     ), routed AS (
       ${messageRoutingMergeSql({ message: '$19::uuid', patch: '$20' })}
     ), reply AS (
       ${assistantReplyInsertSql({
         session: '$9',
         run: '$1',
         content: '$15',
         breadcrumbs: '$16::jsonb',
         when: '$14::boolean AND EXISTS (SELECT 1 FROM run)',
       })}
     )
     SELECT f.phase AS run_before,
       EXISTS (SELECT 1 FROM run) AS run_moved,
       EXISTS (SELECT 1 FROM sessions s WHERE s.session_id = $9) AS session_exists,
       (SELECT p.phase FROM session_phases p WHERE p.session_id = $9) AS session_before,
       (SELECT yes FROM follows) AS session_follows,
       EXISTS (SELECT 1 FROM session) AS session_written,
       EXISTS (SELECT 1 FROM reply) AS reply_stored,
       $17::boolean AND EXISTS (SELECT 1 FROM run)
         AND ${sessionAwaitsAcceptanceSql({ session: '$9', openStates: '$18' })} AS awaits_acceptance
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
      options.reply !== undefined,
      options.reply?.content ?? '',
      messageJson(options.reply?.breadcrumbs),
      options.acceptance === true,
      OPEN_ARTIFACT_STATES,
      options.routing && isUuid(options.routing.messageId) ? options.routing.messageId : null,
      options.routing ? JSON.stringify(options.routing.patch) : null,
    ],
  );
  const row = rows[0];
  if (!row) return { run: { kind: 'missing' }, session: undefined, ...NOTHING_ELSE };
  const runWrite = verdict('run', row.run_before, to, row.run_moved);
  if (runWrite === 'raced') return endStepByStep(db, run, input, options);
  const alongside = { replyStored: row.reply_stored, awaitsAcceptance: row.awaits_acceptance };
  if (!row.session_follows) return { run: runWrite, session: undefined, ...alongside };
  if (!row.session_exists) return { run: runWrite, session: { kind: 'missing' }, ...alongside };
  // A session without a phase row has never run: `idle`.
  const sessionWrite = verdict('session', row.session_before ?? 'idle', to, row.session_written);
  if (sessionWrite !== 'raced') return { run: runWrite, session: sessionWrite, ...alongside };
  return { run: runWrite, session: await setSessionPhase(db, run.sessionId, to, options), ...alongside };
}

const NOTHING_ELSE = { replyStored: false, awaitsAcceptance: false } as const;

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

/**
 * The same end as separate reads and compare-and-sets, each retried on a lost race: the path of a
 * statement that lost one, and the reference the statement is tested against.
 */
export async function endStepByStep(
  db: Queryable,
  run: { runId: string; sessionId: string },
  input: FinishRunInput,
  options: RunEndOptions,
): Promise<RunEnd> {
  const { routing } = options;
  if (routing) await mergeMessageRouting(db, routing.messageId, routing.patch);
  const write = await finishRun(db, run.runId, input);
  if (write.kind !== 'applied') return { run: write, session: undefined, ...NOTHING_ELSE };
  // What the statement writes and reads alongside a run it moved.
  const { reply } = options;
  if (reply)
    await appendMessage(db, { sessionId: run.sessionId, runId: run.runId, role: 'assistant', ...reply });
  const alongside = {
    replyStored: reply !== undefined,
    awaitsAcceptance: options.acceptance === true && (await sessionAwaitsAcceptance(db, run.sessionId)),
  };
  if (write.from === 'idle') return { run: write, session: undefined, ...alongside };
  const other = await getActiveRunForSession(db, run.sessionId);
  if (other && other.runId !== run.runId) return { run: write, session: undefined, ...alongside };
  return {
    run: write,
    session: await setSessionPhase(db, run.sessionId, input.phase, options),
    ...alongside,
  };
}
