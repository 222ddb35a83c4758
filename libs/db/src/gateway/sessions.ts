import type { Phase } from '@quill/contracts';
import { isUuid } from '../ids.ts';
import type { Queryable } from '../pool.ts';

/**
 * `sessions` (title, deletion, last activity) belongs to the gateway; a session's phase lives in
 * `session_phases`, which only the router writes (docs/architecture.md "What each service owns").
 * A session without a phase row has never run: `idle`.
 */

export interface Session {
  sessionId: string;
  projectId: string;
  userId: string;
  title: string;
  phase: Phase;
  clarificationPending: boolean;
  createdAt: string;
  updatedAt: string;
}

export interface SessionRow {
  session_id: string;
  project_id: string;
  user_id: string;
  title: string;
  phase: Phase;
  clarification_pending: boolean;
  created_at: string;
  updated_at: string;
}

export const SESSION_COLUMNS = `s.session_id, s.project_id, s.user_id, s.title,
  COALESCE(p.phase, 'idle') AS phase, COALESCE(p.clarification_pending, false) AS clarification_pending,
  s.created_at, s.updated_at`;
export const SESSION_FROM = 'sessions s LEFT JOIN session_phases p ON p.session_id = s.session_id';

export function toSession(row: SessionRow): Session {
  return {
    sessionId: row.session_id,
    projectId: row.project_id,
    userId: row.user_id,
    title: row.title,
    phase: row.phase,
    clarificationPending: row.clarification_pending,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

export async function createSession(
  db: Queryable,
  input: { projectId: string; userId: string; title: string; sessionId?: string },
): Promise<Session> {
  const { rows } = await db.query<Omit<SessionRow, 'phase' | 'clarification_pending'>>(
    `INSERT INTO sessions (session_id, project_id, user_id, title)
     VALUES (COALESCE($1::uuid, gen_random_uuid()), $2, $3, $4)
     RETURNING session_id, project_id, user_id, title, created_at, updated_at`,
    [input.sessionId ?? null, input.projectId, input.userId, input.title],
  );
  return toSession({ ...rows[0]!, phase: 'idle', clarification_pending: false });
}

/**
 * The session when it belongs to userId and is not deleted; another user's session is
 * indistinguishable from none.
 */
export async function getSessionForUser(
  db: Queryable,
  sessionId: string,
  userId: string,
): Promise<Session | null> {
  if (!isUuid(sessionId) || !isUuid(userId)) return null;
  const { rows } = await db.query<SessionRow>(
    `SELECT ${SESSION_COLUMNS} FROM ${SESSION_FROM}
     WHERE s.session_id = $1 AND s.user_id = $2 AND s.deleted_at IS NULL`,
    [sessionId, userId],
  );
  return rows[0] ? toSession(rows[0]) : null;
}

export async function getSession(db: Queryable, sessionId: string): Promise<Session | null> {
  if (!isUuid(sessionId)) return null;
  const { rows } = await db.query<SessionRow>(
    `SELECT ${SESSION_COLUMNS} FROM ${SESSION_FROM} WHERE s.session_id = $1`,
    [sessionId],
  );
  return rows[0] ? toSession(rows[0]) : null;
}

/** The caller's sessions in a project, most recently active first. */
export async function listSessions(db: Queryable, projectId: string, userId: string): Promise<Session[]> {
  if (!isUuid(projectId) || !isUuid(userId)) return [];
  const { rows } = await db.query<SessionRow>(
    `SELECT ${SESSION_COLUMNS} FROM ${SESSION_FROM}
     WHERE s.project_id = $1 AND s.user_id = $2 AND s.deleted_at IS NULL
     ORDER BY s.updated_at DESC, s.session_id`,
    [projectId, userId],
  );
  return rows.map(toSession);
}

/**
 * The UPDATE that marks the session active (it sorts first in the session list) when the author
 * writes in it; a CTE of the launch's single statement (run-launch.ts).
 */
export function touchSessionSql(session: string): string {
  return `UPDATE sessions SET updated_at = now() WHERE session_id = ${session}`;
}
