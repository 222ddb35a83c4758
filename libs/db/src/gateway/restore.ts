import type pg from 'pg';
import { isUuid } from '../ids.ts';
import { type Queryable, withTransaction } from '../pool.ts';
import { saveFileContent } from '../shared-tables/files.ts';
import {
  type ChangedBy,
  type FileNow,
  type FileStep,
  type LaterChange,
  planRestore,
  type RestoreConflict,
} from './restore-plan.ts';
import {
  fileTextAt,
  getRunStartSnapshot,
  type Snapshot,
  type SnapshotFile,
  takeSnapshot,
} from './snapshots.ts';

/**
 * Undo of a run and restore of a snapshot (docs/kernel.md "Snapshots and undo"). Both bring files
 * back as NEW author versions (history is never rewritten), inside one transaction that holds the
 * project row and every file in scope locked, after taking a snapshot of the state they replace
 * (so a restore can itself be restored). Their changes are marked `restore` in project_changes.
 */

export interface RestoredFile {
  fileId: string;
  title: string;
  action: 'reverted' | 'deleted' | 'undeleted' | 'renamed';
  /** The file's version after the restore. */
  version: number;
}

export type RestoreOutcome =
  | { kind: 'restored'; files: RestoredFile[]; notes: boolean; beforeSnapshotId: string | null }
  | { kind: 'conflict'; conflicts: RestoreConflict[] }
  | { kind: 'not_found' };

interface ChangeRow {
  file_id: string | null;
  run_id: string | null;
  restore: boolean;
}

const changedBy = (row: ChangeRow): ChangedBy =>
  row.restore ? 'restore' : row.run_id === null ? 'author' : 'run';

function blockingMap(rows: readonly ChangeRow[]): Map<string | null, LaterChange> {
  const map = new Map<string | null, LaterChange>();
  for (const row of rows) {
    if (!map.has(row.file_id)) map.set(row.file_id, { changedBy: changedBy(row), runId: row.run_id });
  }
  return map;
}

/**
 * Undoes a run: every file it created, changed, renamed or deleted, and the notes if it changed
 * them, go back to its start snapshot. A file anyone else changed after the run's last change to
 * it is a conflict (nothing is applied) unless `force`.
 */
export async function undoRun(
  pool: pg.Pool,
  input: { projectId: string; runId: string; userId: string; force: boolean },
): Promise<RestoreOutcome> {
  const snapshot = await getRunStartSnapshot(pool, input.runId);
  if (!snapshot || snapshot.projectId !== input.projectId) return { kind: 'not_found' };
  return withTransaction(pool, async (client) => {
    await lockProject(client, input.projectId);
    const { rows: touched } = await client.query<{ file_id: string | null }>(
      'SELECT DISTINCT file_id FROM project_changes WHERE run_id = $1 AND project_id = $2',
      [input.runId, input.projectId],
    );
    const { rows: later } = await client.query<ChangeRow>(
      `SELECT c.file_id, c.run_id, c.restore FROM project_changes c
       JOIN (SELECT file_id, max(id) AS last FROM project_changes
             WHERE run_id = $1 AND project_id = $2 GROUP BY file_id) mine
         ON c.file_id IS NOT DISTINCT FROM mine.file_id
       WHERE c.project_id = $2 AND c.id > mine.last AND c.run_id IS DISTINCT FROM $1
       ORDER BY c.id`,
      [input.runId, input.projectId],
    );
    const scope = touched.flatMap((row) => (row.file_id ? [row.file_id] : []));
    const notesTouched = touched.some((row) => row.file_id === null);
    return applyRestore(client, {
      projectId: input.projectId,
      userId: input.userId,
      snapshot,
      scope,
      restoreNotes: notesTouched,
      blocking: blockingMap(later),
      force: input.force,
      label: `before undo of run ${input.runId}`,
    });
  });
}

/**
 * Restores a snapshot: every file back to its entry, files created since deleted, the notes back.
 * The author's own changes since the snapshot are conflicts unless `force` (runs' and restores'
 * changes are what a restore is for).
 */
export async function restoreSnapshot(
  pool: pg.Pool,
  input: {
    projectId: string;
    snapshot: Snapshot;
    userId: string;
    force: boolean;
    /** Author changes after this change id are conflicts; default: the snapshot's own mark. */
    conflictsSince?: number;
  },
): Promise<RestoreOutcome> {
  const { snapshot } = input;
  const conflictsSince = input.conflictsSince ?? snapshot.changeMark;
  return withTransaction(pool, async (client) => {
    await lockProject(client, input.projectId);
    const { rows: since } = await client.query<ChangeRow & { id: string }>(
      `SELECT id, file_id, run_id, restore FROM project_changes
       WHERE project_id = $1 AND id > $2 ORDER BY id`,
      [input.projectId, snapshot.changeMark],
    );
    const scope = [
      ...snapshot.state.files.map((file) => file.id),
      ...since.flatMap((row) => (row.file_id ? [row.file_id] : [])),
    ];
    return applyRestore(client, {
      projectId: input.projectId,
      userId: input.userId,
      snapshot,
      scope,
      restoreNotes: true,
      blocking: blockingMap(
        since.filter((row) => changedBy(row) === 'author' && Number(row.id) > conflictsSince),
      ),
      force: input.force,
      label: `before restore of snapshot ${snapshot.id}`,
    });
  });
}

async function applyRestore(
  client: pg.PoolClient,
  input: {
    projectId: string;
    userId: string;
    snapshot: Snapshot;
    scope: string[];
    restoreNotes: boolean;
    blocking: Map<string | null, LaterChange>;
    force: boolean;
    label: string;
  },
): Promise<RestoreOutcome> {
  const current = await lockFiles(client, input.projectId, [...new Set(input.scope)]);
  const notes = await client.query<{ notes: string }>('SELECT notes FROM projects WHERE id = $1', [
    input.projectId,
  ]);
  const target = new Map<string, SnapshotFile>(input.snapshot.state.files.map((file) => [file.id, file]));
  const plan = planRestore({
    scope: input.scope,
    target,
    current,
    blocking: input.blocking,
    ...(input.restoreNotes
      ? { notes: { target: input.snapshot.state.notes, current: notes.rows[0]?.notes ?? '' } }
      : {}),
    force: input.force,
  });
  if (plan.conflicts.length > 0) return { kind: 'conflict', conflicts: plan.conflicts };
  if (plan.steps.length === 0 && !plan.restoreNotes)
    return { kind: 'restored', files: [], notes: false, beforeSnapshotId: null };
  const before = await takeSnapshot(client, {
    projectId: input.projectId,
    kind: 'manual',
    label: input.label,
    createdBy: input.userId,
  });
  await client.query("SELECT set_config('quill.restore', 'on', true)");
  const files: RestoredFile[] = [];
  for (const step of plan.steps) {
    const restored = await applyStep(client, input.projectId, step);
    if (restored) files.push(restored);
  }
  if (plan.restoreNotes) {
    await client.query(
      `UPDATE projects SET notes = $2, notes_version = notes_version + 1, updated_at = now() WHERE id = $1`,
      [input.projectId, input.snapshot.state.notes],
    );
  }
  return { kind: 'restored', files, notes: plan.restoreNotes, beforeSnapshotId: before?.id ?? null };
}

async function applyStep(
  client: pg.PoolClient,
  projectId: string,
  step: FileStep,
): Promise<RestoredFile | null> {
  if (step.delete) {
    const { rows } = await client.query<{ version: number }>(
      'UPDATE files SET deleted = true, updated_at = now() WHERE id = $1 RETURNING version',
      [step.fileId],
    );
    return { fileId: step.fileId, title: step.title, action: 'deleted', version: rows[0]!.version };
  }
  let action: RestoredFile['action'] | null = null;
  if (step.undelete) {
    await client.query('UPDATE files SET deleted = false, updated_at = now() WHERE id = $1', [step.fileId]);
    action = 'undeleted';
  }
  if (step.rename) {
    await client.query('UPDATE files SET title = $2, folder = $3, updated_at = now() WHERE id = $1', [
      step.fileId,
      step.rename.title,
      step.rename.folder,
    ]);
    action ??= 'renamed';
  }
  if (step.textOf !== null) {
    const text = await fileTextAt(client, step.fileId, step.textOf);
    const { rows } = await client.query<{ content: string }>('SELECT content FROM files WHERE id = $1', [
      step.fileId,
    ]);
    // The same text at another version (e.g. the author typed it back): no new version needed.
    if (text !== null && rows[0]?.content !== text) {
      await saveFileContent(client, { fileId: step.fileId, content: text, source: 'author', projectId });
      action = action === 'undeleted' ? 'undeleted' : 'reverted';
    }
  }
  if (action === null) return null;
  const { rows } = await client.query<{ version: number; title: string }>(
    'SELECT version, title FROM files WHERE id = $1',
    [step.fileId],
  );
  return { fileId: step.fileId, title: rows[0]!.title, action, version: rows[0]!.version };
}

async function lockProject(db: Queryable, projectId: string): Promise<void> {
  await db.query('SELECT 1 FROM projects WHERE id = $1 FOR UPDATE', [projectId]);
}

async function lockFiles(db: Queryable, projectId: string, fileIds: string[]): Promise<Map<string, FileNow>> {
  if (!isUuid(projectId) || fileIds.length === 0) return new Map();
  const { rows } = await db.query<FileNow>(
    `SELECT id, version, title, folder, deleted FROM files
     WHERE project_id = $1 AND id = ANY($2::uuid[]) ORDER BY id FOR UPDATE`,
    [projectId, fileIds],
  );
  return new Map(rows.map((row) => [row.id, row]));
}
