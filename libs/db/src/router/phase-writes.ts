import { checkTransition, type Phase, type PhaseSubject } from '@quill/contracts';
import { isUuid } from '../ids.ts';
import type { Queryable } from '../pool.ts';
import { OPEN_ARTIFACT_STATES } from '../shared-tables/artifacts.ts';

/**
 * Every phase write of a run or a session: the pure transition table decides
 * (`checkTransition`, docs/architecture.md "Phases"), then a compare-and-set on the phase read
 * applies it, so a concurrent writer can never slip an illegal move in between. The caller logs
 * an `illegal` result; nothing is written for it.
 */
export type PhaseWrite =
  | { kind: 'applied'; from: Phase; to: Phase }
  | { kind: 'unchanged'; phase: Phase }
  | { kind: 'illegal'; from: Phase; to: Phase }
  | { kind: 'missing' };

/** Columns a run's phase write may set alongside (null = keep what the row has). */
export type RunPhaseColumns = Partial<
  Record<
    'stop_reason' | 'error_code' | 'billing_decision' | 'model_calls' | 'tool_calls',
    string | number | null
  >
>;

interface Target {
  subject: PhaseSubject;
  id: string;
  to: Phase;
  /** Runs only: columns set with the phase (COALESCE: null keeps the stored value). */
  set?: RunPhaseColumns;
  /** Sessions only: the clarification flag (undefined keeps it). */
  clarificationPending?: boolean;
}

// A compare-and-set that lost a race reads again; more than a few losses in a row cannot happen
// with one router moving a run, so the last read's verdict stands.
const MAX_ATTEMPTS = 4;

export function applied(write: PhaseWrite): boolean {
  return write.kind === 'applied';
}

export async function movePhase(db: Queryable, target: Target): Promise<PhaseWrite> {
  for (let attempt = 1; ; attempt++) {
    const from = await currentPhase(db, target);
    if (from === null) return { kind: 'missing' };
    const verdict = checkTransition(target.subject, from, target.to);
    if (verdict.kind === 'illegal') return { kind: 'illegal', from, to: target.to };
    if (verdict.kind === 'unchanged') {
      // A session's flag can still change while its phase stays (a run answering a clarification).
      if (target.subject === 'session' && target.clarificationPending !== undefined)
        await writeSession(db, target, from);
      return { kind: 'unchanged', phase: from };
    }
    const wrote =
      target.subject === 'run' ? await writeRun(db, target, from) : await writeSession(db, target, from);
    if (wrote) return { kind: 'applied', from, to: target.to };
    if (attempt >= MAX_ATTEMPTS) {
      const now = await currentPhase(db, target);
      return now === null ? { kind: 'missing' } : { kind: 'illegal', from: now, to: target.to };
    }
  }
}

async function currentPhase(db: Queryable, target: Target): Promise<Phase | null> {
  if (target.subject === 'run') {
    const { rows } = await db.query<{ phase: Phase }>('SELECT phase FROM runs WHERE run_id = $1', [
      target.id,
    ]);
    return rows[0]?.phase ?? null;
  }
  // A session without a phase row has never run: `idle`.
  const { rows } = await db.query<{ phase: Phase | null }>(
    `SELECT p.phase FROM sessions s LEFT JOIN session_phases p ON p.session_id = s.session_id
     WHERE s.session_id = $1`,
    [target.id],
  );
  if (rows.length === 0) return null;
  return rows[0]!.phase ?? 'idle';
}

/**
 * The SET list of a run's phase write: `$2` is the phase, `$4`–`$8` the columns set alongside
 * (`runPhaseColumnParams`; null keeps the stored value); done/error stamp ended_at.
 */
export const RUN_PHASE_SET_SQL = `phase = $2,
       stop_reason = COALESCE($4, stop_reason),
       error_code = COALESCE($5, error_code),
       billing_decision = COALESCE($6, billing_decision),
       model_calls = COALESCE($7, model_calls),
       tool_calls = COALESCE($8, tool_calls),
       updated_at = now(),
       ended_at = CASE WHEN $2 IN ('done', 'error') THEN now() ELSE ended_at END`;

/** `$4`–`$8` of RUN_PHASE_SET_SQL. */
export function runPhaseColumnParams(set: RunPhaseColumns = {}): Array<string | number | null> {
  return [
    set.stop_reason ?? null,
    set.error_code ?? null,
    set.billing_decision ?? null,
    set.model_calls ?? null,
    set.tool_calls ?? null,
  ];
}

async function writeRun(db: Queryable, target: Target, from: Phase): Promise<boolean> {
  const { rowCount } = await db.query(
    `UPDATE runs SET ${RUN_PHASE_SET_SQL} WHERE run_id = $1 AND phase = $3`,
    [target.id, target.to, from, ...runPhaseColumnParams(target.set)],
  );
  return rowCount === 1;
}

async function writeSession(db: Queryable, target: Target, from: Phase): Promise<boolean> {
  const { rowCount } = await db.query(
    `INSERT INTO session_phases AS p (session_id, phase, clarification_pending)
     VALUES ($1, $2, COALESCE($4, false))
     ON CONFLICT (session_id) DO UPDATE SET phase = EXCLUDED.phase,
       clarification_pending = COALESCE($4, p.clarification_pending), updated_at = now()
     WHERE p.phase = $3`,
    [target.id, target.to, from, target.clarificationPending ?? null],
  );
  return rowCount === 1;
}

/**
 * A session resting `waiting_user` only for AI output awaiting acceptance goes back to `done`
 * once the author has decided on every open artifact of its runs. One compare-and-set: it moves
 * only from `waiting_user`, never while a clarification is pending or while an artifact is still
 * open, so a run that started meanwhile (`running`) is never touched.
 */
export async function answerSessionIfSettled(db: Queryable, sessionId: string): Promise<PhaseWrite> {
  const verdict = checkTransition('session', 'waiting_user', 'done');
  if (verdict.kind === 'illegal') return { kind: 'illegal', from: 'waiting_user', to: 'done' };
  const { rowCount } = await db.query(
    `UPDATE session_phases p SET phase = 'done', updated_at = now()
     WHERE p.session_id = $1 AND p.phase = 'waiting_user' AND NOT p.clarification_pending
       AND NOT EXISTS (SELECT 1 FROM artifacts a JOIN runs r ON r.run_id = a.run_id
                       WHERE r.session_id = $1 AND a.state = ANY($2::text[]))`,
    [sessionId, OPEN_ARTIFACT_STATES],
  );
  if (rowCount === 1) return { kind: 'applied', from: 'waiting_user', to: 'done' };
  const { rows } = await db.query<{ phase: Phase }>(
    'SELECT phase FROM session_phases WHERE session_id = $1',
    [sessionId],
  );
  return rows[0] ? { kind: 'unchanged', phase: rows[0].phase } : { kind: 'missing' };
}

/**
 * Moves the session's phase through the transition table (docs/architecture.md "Phases"); the
 * router's phase writer is the only caller, and logs an `illegal` result.
 */
export function setSessionPhase(
  db: Queryable,
  sessionId: string,
  phase: Phase,
  options: { clarificationPending?: boolean } = {},
): Promise<PhaseWrite> {
  if (!isUuid(sessionId)) return Promise.resolve({ kind: 'missing' });
  return movePhase(db, {
    subject: 'session',
    id: sessionId,
    to: phase,
    ...(options.clarificationPending === undefined
      ? {}
      : { clarificationPending: options.clarificationPending }),
  });
}

/** What a compare-and-set to `running` that found `before` means (the caller's one-statement take). */
export function verdictOf(subject: PhaseSubject, before: Phase | null, moved: boolean): PhaseWrite {
  if (before === null) return { kind: 'missing' };
  if (moved) return { kind: 'applied', from: before, to: 'running' };
  const verdict = checkTransition(subject, before, 'running');
  return verdict.kind === 'unchanged'
    ? { kind: 'unchanged', phase: before }
    : { kind: 'illegal', from: before, to: 'running' };
}
