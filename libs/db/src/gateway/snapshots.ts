import { isUuid } from '../ids.ts';
import type { Queryable } from '../pool.ts';

/**
 * Snapshots (docs/kernel.md "Snapshots and undo"): the project's state at one moment, stored
 * cheaply as each live file's version, title and folder (the text is in file_versions already)
 * and the notes. Nothing in a snapshot is ever rewritten.
 */

export type SnapshotKind = 'manual' | 'run_start' | 'branch_head';

export interface SnapshotFile {
  id: string;
  version: number;
  title: string;
  folder: string;
}

export interface SnapshotState {
  files: SnapshotFile[];
  notes: string;
  notesVersion: number;
}

export interface Snapshot {
  id: string;
  projectId: string;
  label: string;
  kind: SnapshotKind;
  runId: string | null;
  createdBy: string | null;
  /** The newest project_changes id when it was taken: every later change has a larger id. */
  changeMark: number;
  state: SnapshotState;
  createdAt: string;
}

interface SnapshotRow {
  id: string;
  project_id: string;
  label: string;
  kind: SnapshotKind;
  run_id: string | null;
  created_by: string | null;
  change_mark: string | number;
  data: { v: 1; files: SnapshotFile[]; notes: string; notes_version: number };
  created_at: string;
}

const COLUMNS = 'id, project_id, label, kind, run_id, created_by, change_mark, data, created_at';

function toSnapshot(row: SnapshotRow): Snapshot {
  return {
    id: row.id,
    projectId: row.project_id,
    label: row.label,
    kind: row.kind,
    runId: row.run_id,
    createdBy: row.created_by,
    changeMark: Number(row.change_mark),
    state: { files: row.data.files, notes: row.data.notes, notesVersion: row.data.notes_version },
    createdAt: row.created_at,
  };
}

// The state as one jsonb value, from the live rows: one statement, no text copied.
const STATE_SQL = `jsonb_build_object('v', 1, 'notes', p.notes, 'notes_version', p.notes_version,
  'files', COALESCE((SELECT jsonb_agg(jsonb_build_object('id', f.id, 'version', f.version,
    'title', f.title, 'folder', f.folder) ORDER BY f.folder, f.title, f.id)
    FROM files f WHERE f.project_id = p.id AND NOT f.deleted), '[]'::jsonb))`;
const MARK_SQL = 'COALESCE((SELECT max(c.id) FROM project_changes c WHERE c.project_id = p.id), 0)';

/**
 * The INSERT that takes a snapshot, its values given as SQL expressions (placeholders), so the
 * launch's single statement (run-launch.ts) takes the run's start snapshot by the same rule.
 */
export function snapshotInsertSql(values: {
  project: string;
  label: string;
  kind: string;
  run: string;
  createdBy: string;
}): string {
  return `INSERT INTO snapshots (project_id, label, kind, run_id, created_by, change_mark, data)
     SELECT p.id, ${values.label}, ${values.kind}, ${values.run}, ${values.createdBy}, ${MARK_SQL}, ${STATE_SQL}
     FROM projects p WHERE p.id = ${values.project} AND p.deleted_at IS NULL
     ON CONFLICT (run_id) WHERE kind = 'run_start' DO NOTHING`;
}

/**
 * Takes a snapshot. A run's start snapshot is taken once (a second take for the same run returns
 * the first), so a retried launch does not move the state the run is undone to.
 */
export async function takeSnapshot(
  db: Queryable,
  input: { projectId: string; kind: SnapshotKind; label?: string; runId?: string; createdBy?: string },
): Promise<Snapshot | null> {
  if (!isUuid(input.projectId)) return null;
  const { rows } = await db.query<SnapshotRow>(
    `${snapshotInsertSql({ project: '$1', label: '$2', kind: '$3', run: '$4::uuid', createdBy: '$5::uuid' })}
     RETURNING ${COLUMNS}`,
    [input.projectId, input.label ?? '', input.kind, input.runId ?? null, input.createdBy ?? null],
  );
  if (rows[0]) return toSnapshot(rows[0]);
  return input.runId ? getRunStartSnapshot(db, input.runId) : null;
}

/** The project's state right now, in the snapshot's shape (for a diff against "current"). */
export async function currentProjectState(db: Queryable, projectId: string): Promise<SnapshotState | null> {
  if (!isUuid(projectId)) return null;
  const { rows } = await db.query<{ data: SnapshotRow['data'] }>(
    `SELECT ${STATE_SQL} AS data FROM projects p WHERE p.id = $1`,
    [projectId],
  );
  const data = rows[0]?.data;
  return data ? { files: data.files, notes: data.notes, notesVersion: data.notes_version } : null;
}

export async function getSnapshot(
  db: Queryable,
  projectId: string,
  snapshotId: string,
): Promise<Snapshot | null> {
  if (!isUuid(projectId) || !isUuid(snapshotId)) return null;
  const { rows } = await db.query<SnapshotRow>(
    `SELECT ${COLUMNS} FROM snapshots WHERE project_id = $1 AND id = $2`,
    [projectId, snapshotId],
  );
  return rows[0] ? toSnapshot(rows[0]) : null;
}

export async function getRunStartSnapshot(db: Queryable, runId: string): Promise<Snapshot | null> {
  if (!isUuid(runId)) return null;
  const { rows } = await db.query<SnapshotRow>(
    `SELECT ${COLUMNS} FROM snapshots WHERE run_id = $1 AND kind = 'run_start'`,
    [runId],
  );
  return rows[0] ? toSnapshot(rows[0]) : null;
}

/** A page of the project's snapshots, newest first, before the cursor (created_at, id). */
export async function listSnapshotsPage(
  db: Queryable,
  projectId: string,
  options: { limit: number; before?: { at: string; id: string } },
): Promise<Snapshot[]> {
  if (!isUuid(projectId)) return [];
  const { rows } = await db.query<SnapshotRow>(
    `SELECT ${COLUMNS} FROM snapshots WHERE project_id = $1
       AND ($2::timestamptz IS NULL OR (created_at, id) < ($2::timestamptz, $3::uuid))
     ORDER BY created_at DESC, id DESC LIMIT $4`,
    [projectId, options.before?.at ?? null, options.before?.id ?? null, options.limit],
  );
  return rows.map(toSnapshot);
}

/**
 * The text of a file at a version ('' for version 0, a file created empty), or null when the
 * version row is not there.
 */
export async function fileTextAt(db: Queryable, fileId: string, version: number): Promise<string | null> {
  if (version === 0) return '';
  if (!isUuid(fileId)) return null;
  const { rows } = await db.query<{ content: string }>(
    'SELECT content FROM file_versions WHERE file_id = $1 AND version = $2',
    [fileId, version],
  );
  return rows[0]?.content ?? null;
}
