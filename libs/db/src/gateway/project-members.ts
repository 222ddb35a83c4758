import { isUuid } from '../ids.ts';
import type { Queryable } from '../pool.ts';
import type { ProjectRole } from './projects.ts';

export interface ProjectMember {
  userId: string;
  email: string;
  displayName: string;
  role: ProjectRole;
}

interface MemberRow {
  user_id: string;
  email: string;
  display_name: string;
  role: ProjectRole;
}

const toMember = (row: MemberRow): ProjectMember => ({
  userId: row.user_id,
  email: row.email,
  displayName: row.display_name,
  role: row.role,
});

/** The project's members, owner first, then by when they joined. */
export async function listProjectMembers(db: Queryable, projectId: string): Promise<ProjectMember[]> {
  if (!isUuid(projectId)) return [];
  const { rows } = await db.query<MemberRow>(
    `SELECT m.user_id, u.email, u.display_name, m.role
     FROM project_members m JOIN users u ON u.id = m.user_id
     WHERE m.project_id = $1 ORDER BY m.role = 'owner' DESC, m.created_at, m.user_id`,
    [projectId],
  );
  return rows.map(toMember);
}

export async function getProjectMember(
  db: Queryable,
  projectId: string,
  userId: string,
): Promise<ProjectMember | null> {
  if (!isUuid(projectId) || !isUuid(userId)) return null;
  const { rows } = await db.query<MemberRow>(
    `SELECT m.user_id, u.email, u.display_name, m.role
     FROM project_members m JOIN users u ON u.id = m.user_id
     WHERE m.project_id = $1 AND m.user_id = $2`,
    [projectId, userId],
  );
  return rows[0] ? toMember(rows[0]) : null;
}

/** Adds a member; false when they already are one (their role is left as it is). */
export async function insertProjectMember(
  db: Queryable,
  projectId: string,
  userId: string,
  role: Exclude<ProjectRole, 'owner'>,
): Promise<boolean> {
  const { rowCount } = await db.query(
    `INSERT INTO project_members (project_id, user_id, role) VALUES ($1, $2, $3)
     ON CONFLICT (project_id, user_id) DO NOTHING`,
    [projectId, userId, role],
  );
  return rowCount === 1;
}

/** Changes a non-owner's role; the owner row is never touched here (false). */
export async function setProjectMemberRole(
  db: Queryable,
  projectId: string,
  userId: string,
  role: Exclude<ProjectRole, 'owner'>,
): Promise<boolean> {
  if (!isUuid(userId)) return false;
  const { rowCount } = await db.query(
    `UPDATE project_members SET role = $3 WHERE project_id = $1 AND user_id = $2 AND role <> 'owner'`,
    [projectId, userId, role],
  );
  return rowCount === 1;
}

/** Removes a non-owner member; the owner cannot be removed (false). */
export async function removeProjectMember(
  db: Queryable,
  projectId: string,
  userId: string,
): Promise<boolean> {
  if (!isUuid(userId)) return false;
  const { rowCount } = await db.query(
    `DELETE FROM project_members WHERE project_id = $1 AND user_id = $2 AND role <> 'owner'`,
    [projectId, userId],
  );
  return rowCount === 1;
}
