import { isUuid } from '../ids.ts';
import type { Queryable } from '../pool.ts';
import { pinSessionDefinitionsSql } from '../shared-tables/definitions.ts';
import { authorMessageInsertSql } from '../shared-tables/messages.ts';
import type { ProjectRole } from './projects.ts';
import {
  SESSION_COLUMNS,
  SESSION_FROM,
  type Session,
  type SessionRow,
  toSession,
  touchSessionSql,
} from './sessions.ts';
import { pinRunSkillsCtes } from './skill-versions.ts';
import { snapshotInsertSql } from './snapshots.ts';

/**
 * The database side of a run's launch (services/gateway/src/run-launcher.ts), each step one round
 * trip: the launch is on the way to every run's first token (docs/decisions/0030).
 */

export interface LaunchSession {
  /** The caller's role in the project; null when they are no member or the project is gone. */
  memberRole: ProjectRole | null;
  /** The session the run starts in; null when it is not the caller's (or was not created). */
  session: Session | null;
}

/**
 * The caller's access to the project and the session the run starts in, in one statement: the
 * caller's own live session `sessionId`, or — without one — a new session titled `title`, created
 * only for a member who may write (a viewer's or a stranger's launch leaves no session behind).
 */
export async function openLaunchSession(
  db: Queryable,
  input: { projectId: string; userId: string; sessionId?: string | undefined; title: string },
): Promise<LaunchSession> {
  if (!isUuid(input.projectId) || !isUuid(input.userId)) return { memberRole: null, session: null };
  if (input.sessionId !== undefined) {
    if (!isUuid(input.sessionId)) return { memberRole: null, session: null };
    const { rows } = await db.query<{ member_role: ProjectRole } & Partial<SessionRow>>(
      `SELECT m.role AS member_role, found.* FROM projects pr
       JOIN project_members m ON m.project_id = pr.id AND m.user_id = $2
       LEFT JOIN (SELECT ${SESSION_COLUMNS} FROM ${SESSION_FROM}
                  WHERE s.session_id = $3 AND s.user_id = $2 AND s.deleted_at IS NULL) found ON true
       WHERE pr.id = $1 AND pr.deleted_at IS NULL`,
      [input.projectId, input.userId, input.sessionId],
    );
    return fromRow(rows[0]);
  }
  const { rows } = await db.query<{ member_role: ProjectRole } & Partial<SessionRow>>(
    `WITH access AS (
       SELECT m.role FROM projects pr JOIN project_members m ON m.project_id = pr.id
       WHERE pr.id = $1 AND m.user_id = $2 AND pr.deleted_at IS NULL
     ), created AS (
       INSERT INTO sessions (session_id, project_id, user_id, title)
       SELECT gen_random_uuid(), $1, $2, $3 FROM access WHERE access.role <> 'viewer'
       RETURNING session_id, project_id, user_id, title, 'idle' AS phase,
         false AS clarification_pending, created_at, updated_at
     )
     SELECT access.role AS member_role, created.* FROM access LEFT JOIN created ON true`,
    [input.projectId, input.userId, input.title],
  );
  return fromRow(rows[0]);
}

function fromRow(row: ({ member_role: ProjectRole } & Partial<SessionRow>) | undefined): LaunchSession {
  if (!row) return { memberRole: null, session: null };
  return {
    memberRole: row.member_role,
    session: row.session_id ? toSession(row as SessionRow) : null,
  };
}

/**
 * Everything the gateway writes for a starting run, in one statement: the run's start snapshot
 * (docs/kernel.md "Snapshots and undo"), the author's message, the session's last activity, the
 * session's definition pins and the run's skill versions (docs/kernel.md "Definitions and
 * pinning"). One statement is atomic on its own: the launcher runs it once billing and the router
 * both said yes (docs/architecture.md, `messages`). Returns the message's id.
 */
export async function recordRunLaunch(
  db: Queryable,
  input: { projectId: string; sessionId: string; runId: string; userId: string; message: string },
): Promise<{ messageId: string }> {
  const [project, session, run, user, content] = ['$1::uuid', '$2::uuid', '$3::uuid', '$4::uuid', '$5'];
  const { rows } = await db.query<{ id: string }>(
    `WITH snapshot_taken AS (
       ${snapshotInsertSql({ project, label: "''", kind: "'run_start'", run, createdBy: user })}
     ), message_added AS (
       ${authorMessageInsertSql({ session, run, content })}
     ), session_touched AS (
       ${touchSessionSql(session)}
     ), definitions_pinned AS (
       ${pinSessionDefinitionsSql(session)}
     ), ${pinRunSkillsCtes(session, run)}
     SELECT id FROM message_added`,
    [input.projectId, input.sessionId, input.runId, input.userId, input.message],
  );
  return { messageId: rows[0]!.id };
}
