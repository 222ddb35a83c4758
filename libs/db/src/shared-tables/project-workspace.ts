import { isUuid } from '../ids.ts';
import type { Queryable } from '../pool.ts';

/**
 * The parts of a project the agent maintains with update_project: its notes (author-confirmed
 * and AI-proposed sections, parsed by the tool), free-form info, and the task board. Stored as
 * plain text / JSON here; what is allowed into them is the tool's business.
 */
export interface ProjectWorkspace {
  projectId: string;
  title: string;
  notes: string;
  /** The notes' rev: what a commit of new notes is based on (state-commits.ts). */
  notesRev: number;
  info: Record<string, unknown>;
  taskBoard: unknown[];
  updatedAt: string;
}

interface WorkspaceRow {
  id: string;
  title: string;
  notes: string;
  notes_version: number;
  info: Record<string, unknown>;
  task_board: unknown[];
  updated_at: string;
}

const toWorkspace = (row: WorkspaceRow): ProjectWorkspace => ({
  projectId: row.id,
  title: row.title,
  notes: row.notes,
  notesRev: row.notes_version,
  info: row.info,
  taskBoard: row.task_board,
  updatedAt: row.updated_at,
});

/** The workspace, optionally locked FOR UPDATE so a read-check-write sees no concurrent change. */
export async function getProjectWorkspace(
  db: Queryable,
  projectId: string,
  options: { lock?: boolean } = {},
): Promise<ProjectWorkspace | null> {
  if (!isUuid(projectId)) return null;
  const { rows } = await db.query<WorkspaceRow>(
    `SELECT id, title, notes, notes_version, info, task_board, updated_at FROM projects WHERE id = $1
     ${options.lock ? 'FOR UPDATE' : ''}`,
    [projectId],
  );
  return rows[0] ? toWorkspace(rows[0]) : null;
}

/** Writes the given parts; parts left undefined keep their stored value. */
export async function updateProjectWorkspace(
  db: Queryable,
  projectId: string,
  changes: { notes?: string; info?: Record<string, unknown>; taskBoard?: unknown[] },
): Promise<void> {
  await db.query(
    `UPDATE projects SET
       -- The author's notes editor checks its save against this version (README "HTTP API").
       notes_version = notes_version + CASE WHEN $2::text IS DISTINCT FROM notes AND $2 IS NOT NULL
                                            THEN 1 ELSE 0 END,
       notes = COALESCE($2, notes),
       info = COALESCE($3::jsonb, info),
       task_board = COALESCE($4::jsonb, task_board),
       updated_at = now()
     WHERE id = $1`,
    [
      projectId,
      changes.notes ?? null,
      changes.info === undefined ? null : JSON.stringify(changes.info),
      changes.taskBoard === undefined ? null : JSON.stringify(changes.taskBoard),
    ],
  );
}
