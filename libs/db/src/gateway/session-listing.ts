import type { Breadcrumbs, Phase } from '@quill/contracts';
import { visibleMessagesSql } from '../branch-path.ts';
import { isUuid } from '../ids.ts';
import type { Queryable } from '../pool.ts';
import type { Run } from '../router/runs.ts';
import type { TimeCursor } from './project-admin.ts';
import { SESSION_COLUMNS, SESSION_FROM, type Session, type SessionRow, toSession } from './sessions.ts';

/**
 * Reads for the author's history views (README "HTTP API"): the caller's sessions of a project,
 * a session's messages with the outcome of the run that wrote each reply, and its runs.
 */
export async function listSessionsPage(
  db: Queryable,
  projectId: string,
  userId: string,
  options: { limit: number; after?: TimeCursor },
): Promise<Session[]> {
  if (!isUuid(projectId) || !isUuid(userId)) return [];
  const { rows } = await db.query<SessionRow>(
    `SELECT ${SESSION_COLUMNS} FROM ${SESSION_FROM}
     WHERE s.project_id = $1 AND s.user_id = $2 AND s.deleted_at IS NULL
       AND ($3::timestamptz IS NULL OR (s.updated_at, s.session_id) < ($3::timestamptz, $4::uuid))
     ORDER BY s.updated_at DESC, s.session_id DESC LIMIT $5`,
    [projectId, userId, options.after?.at ?? null, options.after?.id ?? null, options.limit],
  );
  return rows.map(toSession);
}

export async function renameSession(db: Queryable, sessionId: string, title: string): Promise<boolean> {
  const { rowCount } = await db.query(
    'UPDATE sessions SET title = $2 WHERE session_id = $1 AND deleted_at IS NULL',
    [sessionId, title],
  );
  return rowCount === 1;
}

/** Soft delete: the session's runs and messages stay for billing and audit, out of every listing. */
export async function softDeleteSession(db: Queryable, sessionId: string): Promise<boolean> {
  const { rowCount } = await db.query(
    'UPDATE sessions SET deleted_at = now() WHERE session_id = $1 AND deleted_at IS NULL',
    [sessionId],
  );
  return rowCount === 1;
}

export interface SessionMessage {
  id: string;
  seq: number;
  role: 'user' | 'assistant';
  content: string;
  runId: string | null;
  breadcrumbs: Breadcrumbs | null;
  createdAt: string;
  run: { phase: Phase; stopReason: string | null; errorCode: string | null } | null;
}

/** Messages oldest first, after insertion sequence `afterSeq`, each with its run's outcome. */
export async function listSessionMessagesPage(
  db: Queryable,
  sessionId: string,
  options: { limit: number; afterSeq?: number },
): Promise<SessionMessage[]> {
  const { rows } = await db.query(
    `WITH RECURSIVE ${visibleMessagesSql('$1::uuid')}
     SELECT m.id, m.seq, m.role, m.content, m.run_id, m.breadcrumbs, m.created_at,
            r.phase AS run_phase, r.stop_reason, r.error_code, r.run_id AS joined_run
     FROM messages m JOIN visible v ON v.id = m.id LEFT JOIN runs r ON r.run_id = m.run_id
     WHERE m.seq > $2
     ORDER BY m.seq LIMIT $3`,
    [sessionId, options.afterSeq ?? 0, options.limit],
  );
  return rows.map((row) => ({
    id: row.id,
    seq: Number(row.seq),
    role: row.role,
    content: row.content,
    runId: row.run_id,
    breadcrumbs: row.breadcrumbs,
    createdAt: row.created_at,
    run: row.joined_run
      ? { phase: row.run_phase, stopReason: row.stop_reason, errorCode: row.error_code }
      : null,
  }));
}

export type RunSummary = Pick<
  Run,
  'runId' | 'phase' | 'stopReason' | 'errorCode' | 'billingDecision' | 'createdAt' | 'endedAt'
>;

/** The session's runs oldest first, keyset-paginated on (created_at, run_id). */
export async function listSessionRunsPage(
  db: Queryable,
  sessionId: string,
  options: { limit: number; after?: TimeCursor },
): Promise<RunSummary[]> {
  const { rows } = await db.query(
    `SELECT run_id, phase, stop_reason, error_code, billing_decision, created_at, ended_at
     FROM runs WHERE session_id = $1
       AND ($2::timestamptz IS NULL OR (created_at, run_id) > ($2::timestamptz, $3::uuid))
     ORDER BY created_at, run_id LIMIT $4`,
    [sessionId, options.after?.at ?? null, options.after?.id ?? null, options.limit],
  );
  return rows.map((row) => ({
    runId: row.run_id,
    phase: row.phase,
    stopReason: row.stop_reason,
    errorCode: row.error_code,
    billingDecision: row.billing_decision,
    createdAt: row.created_at,
    endedAt: row.ended_at,
  }));
}
