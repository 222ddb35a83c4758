import { type BillingDecision, type GenerationMode, type Phase, phasesLeadingTo } from '@quill/contracts';
import { isUuid } from '../ids.ts';
import type { Queryable } from '../pool.ts';
import { movePhase, type PhaseWrite, type RunPhaseColumns, verdictOf } from './phase-writes.ts';

/**
 * The `runs` table belongs to the router (docs/architecture.md "What each service owns"): every
 * write below is called from services/router only, and every phase write goes through the one
 * transition table (`movePhase`). The epoch lives in `run_fences` (the workers', run-fence.ts).
 */

export interface Run {
  runId: string;
  sessionId: string;
  projectId: string;
  userId: string;
  phase: Phase;
  stopReason: string | null;
  errorCode: string | null;
  billingDecision: BillingDecision | null;
  epoch: number;
  generationMode: GenerationMode;
  modelCalls: number;
  toolCalls: number;
  createdAt: string;
  updatedAt: string;
  endedAt: string | null;
}

interface RunRow {
  run_id: string;
  session_id: string;
  project_id: string;
  user_id: string;
  phase: Phase;
  stop_reason: string | null;
  error_code: string | null;
  billing_decision: BillingDecision | null;
  epoch: number;
  generation_mode: GenerationMode;
  model_calls: number;
  tool_calls: number;
  created_at: string;
  updated_at: string;
  ended_at: string | null;
}

// The epoch is read from the workers' fence row (0 until a worker took a redelivery over).
const RUN_COLUMNS =
  'run_id, session_id, project_id, user_id, phase, stop_reason, error_code, billing_decision, COALESCE((SELECT f.epoch FROM run_fences f WHERE f.run_id = runs.run_id), 0) AS epoch, generation_mode, model_calls, tool_calls, created_at, updated_at, ended_at';

/** Phases of a run that has not ended: it still holds (or waits on) its session. */
export const ACTIVE_RUN_PHASES: readonly Phase[] = ['idle', 'running', 'waiting_user'];

function toRun(row: RunRow): Run {
  return {
    runId: row.run_id,
    sessionId: row.session_id,
    projectId: row.project_id,
    userId: row.user_id,
    phase: row.phase,
    stopReason: row.stop_reason,
    errorCode: row.error_code,
    billingDecision: row.billing_decision,
    epoch: row.epoch,
    generationMode: row.generation_mode,
    modelCalls: row.model_calls,
    toolCalls: row.tool_calls,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    endedAt: row.ended_at,
  };
}

/**
 * Opens the run in phase `idle` (admitted, not yet taken by a router); opening the same run id
 * again returns the existing run. One statement on the way to the first token: the new row comes
 * back from the insert, an existing one from the same statement's read.
 */
export async function createRun(
  db: Queryable,
  input: {
    runId: string;
    sessionId: string;
    projectId: string;
    userId: string;
    generationMode: GenerationMode;
    /** The API key the run was started with, for per-key usage; null for other credentials. */
    apiKeyId?: string | null;
  },
): Promise<Run> {
  const { rows } = await db.query<RunRow>(
    `WITH created AS (
       INSERT INTO runs (run_id, session_id, project_id, user_id, generation_mode, api_key_id)
       VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (run_id) DO NOTHING
       RETURNING ${RUN_COLUMNS}
     )
     SELECT * FROM created
     UNION ALL
     SELECT ${RUN_COLUMNS} FROM runs WHERE run_id = $1 AND NOT EXISTS (SELECT 1 FROM created)`,
    [
      input.runId,
      input.sessionId,
      input.projectId,
      input.userId,
      input.generationMode,
      input.apiKeyId ?? null,
    ],
  );
  // Opened at the same moment by another call: the row committed after this statement began is
  // not in its snapshot, a read of its own sees it.
  return rows[0] ? toRun(rows[0]) : (await getRun(db, input.runId))!;
}

export async function getRun(db: Queryable, runId: string): Promise<Run | null> {
  if (!isUuid(runId)) return null;
  const { rows } = await db.query<RunRow>(`SELECT ${RUN_COLUMNS} FROM runs WHERE run_id = $1`, [runId]);
  return rows[0] ? toRun(rows[0]) : null;
}

export async function getRunForUser(db: Queryable, runId: string, userId: string): Promise<Run | null> {
  if (!isUuid(runId) || !isUuid(userId)) return null;
  const { rows } = await db.query<RunRow>(
    `SELECT ${RUN_COLUMNS} FROM runs WHERE run_id = $1 AND user_id = $2`,
    [runId, userId],
  );
  return rows[0] ? toRun(rows[0]) : null;
}

/** The session's run that has not ended yet, if any. */
export async function getActiveRunForSession(db: Queryable, sessionId: string): Promise<Run | null> {
  if (!isUuid(sessionId)) return null;
  const { rows } = await db.query<RunRow>(
    `SELECT ${RUN_COLUMNS} FROM runs WHERE session_id = $1 AND phase = ANY($2::text[])
     ORDER BY created_at DESC LIMIT 1`,
    [sessionId, ACTIVE_RUN_PHASES],
  );
  return rows[0] ? toRun(rows[0]) : null;
}

export interface FinishRunInput {
  phase: 'done' | 'error' | 'waiting_user';
  stopReason?: string | null;
  errorCode?: string | null;
  billingDecision?: BillingDecision | null;
  modelCalls?: number;
  toolCalls?: number;
}

/** A router took the run from the queue: `idle` → `running` (a takeover finds it `running`). */
export function startRun(db: Queryable, runId: string): Promise<PhaseWrite> {
  if (!isUuid(runId)) return Promise.resolve({ kind: 'missing' });
  return movePhase(db, { subject: 'run', id: runId, to: 'running' });
}

/** The run as a router found it when it took it, and what the take wrote. */
export interface TakenRun {
  /** The run row before the take (null: no such run); `phase` is the one it had. */
  found: Run | null;
  run: PhaseWrite;
  /** The session's move, when the run moved. */
  session: PhaseWrite | undefined;
}

/**
 * A router took the run from the queue: run `idle` → `running` and its session → `running`, in
 * one statement that also reads the row (one round trip and one commit on the way to the first
 * token, instead of a read, then a read and a compare-and-set for each). The transition table
 * still decides: each write is a compare-and-set on the phases `phasesLeadingTo` lists, and the
 * phases found give the verdicts `movePhase` would (`unchanged` for a takeover's `running`,
 * `illegal` for a run that ended). The session moves only when the run did.
 */
export async function takeRun(db: Queryable, runId: string): Promise<TakenRun> {
  if (!isUuid(runId)) return { found: null, run: { kind: 'missing' }, session: undefined };
  const { rows } = await db.query<
    RunRow & {
      session_exists: boolean;
      session_before: Phase | null;
      run_moved: boolean;
      session_moved: boolean;
    }
  >(
    `WITH run AS (
       UPDATE runs SET phase = 'running', updated_at = now()
       WHERE run_id = $1 AND phase = ANY($2::text[])
       RETURNING session_id
     ), session AS (
       INSERT INTO session_phases AS p (session_id, phase, clarification_pending)
       SELECT run.session_id, 'running', false FROM run
       WHERE EXISTS (SELECT 1 FROM sessions s WHERE s.session_id = run.session_id)
       ON CONFLICT (session_id) DO UPDATE SET phase = 'running', updated_at = now()
       WHERE p.phase = ANY($3::text[])
       RETURNING p.session_id
     )
     SELECT ${RUN_COLUMNS},
       EXISTS (SELECT 1 FROM sessions s WHERE s.session_id = runs.session_id) AS session_exists,
       (SELECT p.phase FROM session_phases p WHERE p.session_id = runs.session_id) AS session_before,
       EXISTS (SELECT 1 FROM run) AS run_moved,
       EXISTS (SELECT 1 FROM session) AS session_moved
     FROM runs WHERE run_id = $1`,
    [runId, phasesLeadingTo('run', 'running'), phasesLeadingTo('session', 'running')],
  );
  // The outer SELECT reads the snapshot before the statement's own writes: the row as found.
  const row = rows[0];
  if (!row) return { found: null, run: { kind: 'missing' }, session: undefined };
  let found = toRun(row);
  if (!row.run_moved && phasesLeadingTo('run', 'running').includes(found.phase)) {
    // A racing take committed between the snapshot and the write: a separate statement sees it.
    found = (await getRun(db, runId)) ?? found;
  }
  const run = verdictOf('run', found.phase, row.run_moved);
  if (run.kind !== 'applied') return { found, run, session: undefined };
  const session = row.session_exists
    ? verdictOf('session', row.session_before ?? 'idle', row.session_moved)
    : ({ kind: 'missing' } as const);
  return { found, run, session };
}

/**
 * Moves a run to its end phase through the transition table: a duplicated or redelivered end is
 * `unchanged`, an end of a run that already ended differently is `illegal` (refused; the caller
 * logs it). `waiting_user` (clarification) keeps the run open; done/error stamp ended_at.
 */
export function finishRun(db: Queryable, runId: string, input: FinishRunInput): Promise<PhaseWrite> {
  if (!isUuid(runId)) return Promise.resolve({ kind: 'missing' });
  return movePhase(db, {
    subject: 'run',
    id: runId,
    to: input.phase,
    set: endColumns(input),
  });
}

/** The columns a run's end sets alongside its phase. */
export function endColumns(input: FinishRunInput): RunPhaseColumns {
  return {
    stop_reason: input.stopReason ?? null,
    error_code: input.errorCode ?? null,
    billing_decision: input.billingDecision ?? null,
    model_calls: input.modelCalls ?? null,
    tool_calls: input.toolCalls ?? null,
  };
}

/**
 * Undoes an admission that was never started (the gateway's launch failed before billing granted
 * a credit): the `idle` row goes, so a refused request leaves no run. A run past `idle` stays.
 */
export async function discardIdleRun(db: Queryable, runId: string): Promise<boolean> {
  if (!isUuid(runId)) return false;
  const { rowCount } = await db.query(`DELETE FROM runs WHERE run_id = $1 AND phase = 'idle'`, [runId]);
  return rowCount === 1;
}

export interface UnsettledRun {
  runId: string;
  sessionId: string;
  userId: string;
  phase: Phase;
  stopReason: string | null;
  errorCode: string | null;
  /** When the run was launched: a read of its record starts shortly before (docs/decisions/0075). */
  createdAt: string;
}

/**
 * Settlement reconciliation (README "Fault tolerance"): runs that reserved a credit and ended
 * (or rest waiting for the author) at least `minAgeSeconds` ago without a settlement row.
 */
export async function listUnsettledEndedRuns(
  db: Queryable,
  options: { minAgeSeconds: number; limit: number },
): Promise<UnsettledRun[]> {
  const { rows } = await db.query<{
    run_id: string;
    session_id: string;
    user_id: string;
    phase: Phase;
    stop_reason: string | null;
    error_code: string | null;
    created_at: string;
  }>(
    `SELECT r.run_id, r.session_id, r.user_id, r.phase, r.stop_reason, r.error_code, r.created_at FROM runs r
     WHERE r.billing_decision IS NULL AND r.phase IN ('done', 'error', 'waiting_user')
       AND r.updated_at < now() - make_interval(secs => $1)
       AND EXISTS (SELECT 1 FROM billing_ledger l WHERE l.run_id = r.run_id AND l.kind = 'reserve')
       AND NOT EXISTS (SELECT 1 FROM settlements s WHERE s.run_id = r.run_id)
     ORDER BY r.updated_at LIMIT $2`,
    [options.minAgeSeconds, options.limit],
  );
  return rows.map((row) => ({
    runId: row.run_id,
    sessionId: row.session_id,
    userId: row.user_id,
    phase: row.phase,
    stopReason: row.stop_reason,
    errorCode: row.error_code,
    createdAt: row.created_at,
  }));
}

/** Runs still `idle` or `running` that started at least `minAgeSeconds` ago, oldest first. */
export async function listRunningRunsOlderThan(
  db: Queryable,
  options: { minAgeSeconds: number; limit: number },
): Promise<Array<{ runId: string; sessionId: string; userId: string; createdAt: string }>> {
  const { rows } = await db.query<{
    run_id: string;
    session_id: string;
    user_id: string;
    created_at: string;
  }>(
    `SELECT run_id, session_id, user_id, created_at FROM runs
     WHERE phase IN ('idle', 'running') AND created_at < now() - make_interval(secs => $1)
     ORDER BY created_at LIMIT $2`,
    [options.minAgeSeconds, options.limit],
  );
  return rows.map((row) => ({
    runId: row.run_id,
    sessionId: row.session_id,
    userId: row.user_id,
    createdAt: row.created_at,
  }));
}

/**
 * Ended runs whose billing decision the row does not carry yet though billing settled them (its
 * reconciler settled on its own): the router copies billing's decision onto its row.
 */
export async function copySettledDecisions(db: Queryable, limit: number): Promise<number> {
  const { rowCount } = await db.query(
    `UPDATE runs r SET billing_decision = s.decision, updated_at = now() FROM settlements s
     WHERE s.run_id = r.run_id AND r.run_id IN (
       SELECT r2.run_id FROM runs r2 JOIN settlements s2 ON s2.run_id = r2.run_id
       WHERE r2.billing_decision IS NULL AND r2.phase IN ('done', 'error', 'waiting_user') LIMIT $1)`,
    [limit],
  );
  return rowCount ?? 0;
}

/** Runs whose stream ended at least `minAgeSeconds` ago and is not archived yet, oldest first. */
export async function listUnarchivedEndedRuns(
  db: Queryable,
  options: { minAgeSeconds: number; limit: number },
): Promise<Array<{ runId: string; createdAt: string }>> {
  const { rows } = await db.query<{ run_id: string; created_at: string }>(
    `SELECT run_id, created_at FROM runs
     WHERE archived_at IS NULL AND phase IN ('done', 'error', 'waiting_user')
       AND updated_at < now() - make_interval(secs => $1)
     ORDER BY updated_at LIMIT $2`,
    [options.minAgeSeconds, options.limit],
  );
  return rows.map((row) => ({ runId: row.run_id, createdAt: row.created_at }));
}
