import type { Phase } from '@quill/contracts';
import { isUuid } from './ids.ts';
import type { Queryable } from './pool.ts';

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

interface SessionRow {
  session_id: string;
  project_id: string;
  user_id: string;
  title: string;
  phase: Phase;
  clarification_pending: boolean;
  created_at: string;
  updated_at: string;
}

const SESSION_COLUMNS =
  'session_id, project_id, user_id, title, phase, clarification_pending, created_at, updated_at';

function toSession(row: SessionRow): Session {
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
  const { rows } = await db.query<SessionRow>(
    `INSERT INTO sessions (session_id, project_id, user_id, title)
     VALUES (COALESCE($1::uuid, gen_random_uuid()), $2, $3, $4) RETURNING ${SESSION_COLUMNS}`,
    [input.sessionId ?? null, input.projectId, input.userId, input.title],
  );
  return toSession(rows[0]!);
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
    `SELECT ${SESSION_COLUMNS} FROM sessions WHERE session_id = $1 AND user_id = $2 AND deleted_at IS NULL`,
    [sessionId, userId],
  );
  return rows[0] ? toSession(rows[0]) : null;
}

export async function getSession(db: Queryable, sessionId: string): Promise<Session | null> {
  if (!isUuid(sessionId)) return null;
  const { rows } = await db.query<SessionRow>(
    `SELECT ${SESSION_COLUMNS} FROM sessions WHERE session_id = $1`,
    [sessionId],
  );
  return rows[0] ? toSession(rows[0]) : null;
}

/** The caller's sessions in a project, most recently active first. */
export async function listSessions(db: Queryable, projectId: string, userId: string): Promise<Session[]> {
  if (!isUuid(projectId) || !isUuid(userId)) return [];
  const { rows } = await db.query<SessionRow>(
    `SELECT ${SESSION_COLUMNS} FROM sessions WHERE project_id = $1 AND user_id = $2 AND deleted_at IS NULL
     ORDER BY updated_at DESC, session_id`,
    [projectId, userId],
  );
  return rows.map(toSession);
}

export async function setSessionPhase(
  db: Queryable,
  sessionId: string,
  phase: Phase,
  options: { clarificationPending?: boolean } = {},
): Promise<boolean> {
  if (!isUuid(sessionId)) return false;
  const { rowCount } = await db.query(
    `UPDATE sessions SET phase = $2, updated_at = now(),
       clarification_pending = COALESCE($3, clarification_pending)
     WHERE session_id = $1`,
    [sessionId, phase, options.clarificationPending ?? null],
  );
  return rowCount === 1;
}
