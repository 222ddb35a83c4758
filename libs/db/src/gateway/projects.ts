import { isUuid } from '../ids.ts';
import type { Queryable } from '../pool.ts';

export type ProjectRole = 'owner' | 'editor' | 'viewer';

export interface Project {
  id: string;
  ownerId: string;
  title: string;
  projectType: string;
  language: string;
  notes: string;
  notesVersion: number;
  archivedAt: string | null;
  deletedAt: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface ProjectRow {
  id: string;
  owner_id: string;
  title: string;
  project_type: string;
  language: string;
  notes: string;
  notes_version: number;
  archived_at: string | null;
  deleted_at: string | null;
  created_at: string;
  updated_at: string;
}

export const PROJECT_COLUMNS =
  'p.id, p.owner_id, p.title, p.project_type, p.language, p.notes, p.notes_version, p.archived_at, p.deleted_at, p.created_at, p.updated_at';

export function toProject(row: ProjectRow): Project {
  return {
    id: row.id,
    ownerId: row.owner_id,
    title: row.title,
    projectType: row.project_type,
    language: row.language,
    notes: row.notes,
    notesVersion: row.notes_version,
    archivedAt: row.archived_at,
    deletedAt: row.deleted_at,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

export type ProjectRowWithRole = ProjectRow & { member_role: ProjectRole };
export interface ProjectMembership {
  project: Project;
  memberRole: ProjectRole;
}

/** Creates the project and makes its owner a member in one statement, so neither exists alone. */
export async function createProject(
  db: Queryable,
  input: {
    ownerId: string;
    title: string;
    projectType?: string;
    language?: string;
    notes?: string;
    /** Left out: the column's default, `auto` (docs/kernel.md "Artifacts and acceptance"). */
    artifactAcceptance?: 'auto' | 'review';
  },
): Promise<Project> {
  const { rows } = await db.query<ProjectRow>(
    `WITH p AS (
       INSERT INTO projects (owner_id, title, project_type, language, notes, artifact_acceptance)
       VALUES ($1, $2, $3, $4, $5, COALESCE($6, 'auto')) RETURNING *
     ), member AS (
       INSERT INTO project_members (project_id, user_id, role) SELECT id, owner_id, 'owner' FROM p
     )
     SELECT ${PROJECT_COLUMNS} FROM p`,
    [
      input.ownerId,
      input.title,
      input.projectType ?? 'novel',
      input.language ?? 'zh',
      input.notes ?? '',
      input.artifactAcceptance ?? null,
    ],
  );
  return toProject(rows[0]!);
}

/** Adds a member or changes an existing member's role. */
export async function addProjectMember(
  db: Queryable,
  projectId: string,
  userId: string,
  role: ProjectRole,
): Promise<void> {
  await db.query(
    `INSERT INTO project_members (project_id, user_id, role) VALUES ($1, $2, $3)
     ON CONFLICT (project_id, user_id) DO UPDATE SET role = EXCLUDED.role`,
    [projectId, userId, role],
  );
}

/**
 * The project as the caller may see it; null when it does not exist, they are not a member, or
 * it is deleted (a deleted project is invisible everywhere but to its restore, `includeDeleted`).
 */
export async function getProjectForUser(
  db: Queryable,
  projectId: string,
  userId: string,
  options: { includeDeleted?: boolean } = {},
): Promise<ProjectMembership | null> {
  if (!isUuid(projectId) || !isUuid(userId)) return null;
  const { rows } = await db.query<ProjectRowWithRole>(
    `SELECT ${PROJECT_COLUMNS}, m.role AS member_role
     FROM projects p JOIN project_members m ON m.project_id = p.id
     WHERE p.id = $1 AND m.user_id = $2 ${options.includeDeleted ? '' : 'AND p.deleted_at IS NULL'}`,
    [projectId, userId],
  );
  const row = rows[0];
  return row ? { project: toProject(row), memberRole: row.member_role } : null;
}

export async function listProjectsForUser(db: Queryable, userId: string): Promise<ProjectMembership[]> {
  const { rows } = await db.query<ProjectRowWithRole>(
    `SELECT ${PROJECT_COLUMNS}, m.role AS member_role
     FROM projects p JOIN project_members m ON m.project_id = p.id
     WHERE m.user_id = $1 AND p.deleted_at IS NULL ORDER BY p.updated_at DESC, p.id`,
    [userId],
  );
  return rows.map((row) => ({ project: toProject(row), memberRole: row.member_role }));
}

export async function getProject(db: Queryable, projectId: string): Promise<Project | null> {
  if (!isUuid(projectId)) return null;
  const { rows } = await db.query<ProjectRow>(`SELECT ${PROJECT_COLUMNS} FROM projects p WHERE p.id = $1`, [
    projectId,
  ]);
  return rows[0] ? toProject(rows[0]) : null;
}
