import { isUuid } from '../ids.ts';
import type { Queryable } from '../pool.ts';
import {
  PROJECT_COLUMNS,
  type Project,
  type ProjectMembership,
  type ProjectRowWithRole,
  toProject,
} from './projects.ts';

/** A keyset position in a newest-first list: the row's `updated_at` and id. */
export interface TimeCursor {
  at: string;
  id: string;
}

/**
 * One page of the caller's live projects, most recently changed first; `archived` picks the
 * archived ones or the others. Keyset pagination on (updated_at, id), stable under inserts.
 */
export async function listProjectsPage(
  db: Queryable,
  userId: string,
  options: { archived: boolean; limit: number; after?: TimeCursor },
): Promise<ProjectMembership[]> {
  const { rows } = await db.query<ProjectRowWithRole>(
    `SELECT ${PROJECT_COLUMNS}, m.role AS member_role
     FROM projects p JOIN project_members m ON m.project_id = p.id
     WHERE m.user_id = $1 AND p.deleted_at IS NULL AND (p.archived_at IS NOT NULL) = $2
       AND ($3::timestamptz IS NULL OR (p.updated_at, p.id) < ($3::timestamptz, $4::uuid))
     ORDER BY p.updated_at DESC, p.id DESC LIMIT $5`,
    [userId, options.archived, options.after?.at ?? null, options.after?.id ?? null, options.limit],
  );
  return rows.map((row) => ({ project: toProject(row), memberRole: row.member_role }));
}

/** Changes the given fields; `archived` stamps or clears `archived_at`. */
export async function updateProject(
  db: Queryable,
  projectId: string,
  changes: { title?: string; projectType?: string; language?: string; archived?: boolean },
): Promise<Project | null> {
  if (!isUuid(projectId)) return null;
  const { rows } = await db.query(
    `UPDATE projects p SET
       title = COALESCE($2, title),
       project_type = COALESCE($3, project_type),
       language = COALESCE($4, language),
       archived_at = CASE WHEN $5::boolean IS NULL THEN archived_at
                          WHEN $5 THEN COALESCE(archived_at, now()) ELSE NULL END,
       updated_at = now()
     WHERE id = $1 AND deleted_at IS NULL RETURNING ${PROJECT_COLUMNS}`,
    [
      projectId,
      changes.title ?? null,
      changes.projectType ?? null,
      changes.language ?? null,
      changes.archived ?? null,
    ],
  );
  return rows[0] ? toProject(rows[0]) : null;
}

export async function softDeleteProject(db: Queryable, projectId: string): Promise<boolean> {
  if (!isUuid(projectId)) return false;
  const { rowCount } = await db.query(
    'UPDATE projects SET deleted_at = now() WHERE id = $1 AND deleted_at IS NULL',
    [projectId],
  );
  return rowCount === 1;
}

/** Undeletes a project deleted less than `withinDays` ago; null when there is nothing to restore. */
export async function restoreProject(
  db: Queryable,
  projectId: string,
  withinDays: number,
): Promise<Project | null> {
  if (!isUuid(projectId)) return null;
  const { rows } = await db.query(
    `UPDATE projects p SET deleted_at = NULL, updated_at = now()
     WHERE id = $1 AND deleted_at IS NOT NULL AND deleted_at > now() - make_interval(days => $2)
     RETURNING ${PROJECT_COLUMNS}`,
    [projectId, withinDays],
  );
  return rows[0] ? toProject(rows[0]) : null;
}
