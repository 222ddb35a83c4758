import type { SnapshotFile } from './snapshots.ts';

/**
 * What a restore does, decided from data (docs/kernel.md "Snapshots and undo"): for every file in
 * scope, the steps that bring it back to its target state (a snapshot's entry, or "absent", which
 * means deleted), and which of those files someone changed in a way the restore would undo. Pure:
 * restore.ts loads the inputs under locks and applies the result.
 */

/** Who made a change after the point being restored to. */
export type ChangedBy = 'author' | 'run' | 'restore';

export interface FileNow {
  id: string;
  version: number;
  title: string;
  folder: string;
  deleted: boolean;
}

export interface LaterChange {
  changedBy: ChangedBy;
  runId: string | null;
}

export interface RestoreConflict {
  /** null: the project's notes. */
  fileId: string | null;
  title: string;
  changedBy: ChangedBy;
  runId: string | null;
}

export interface FileStep {
  fileId: string;
  /** The title it has now (what the author recognises). */
  title: string;
  delete: boolean;
  undelete: boolean;
  /** The version whose text becomes a new author version; null when the version is already the target's. */
  textOf: number | null;
  rename: { title: string; folder: string } | null;
}

export interface RestorePlanInput {
  scope: readonly string[];
  target: ReadonlyMap<string, SnapshotFile>;
  current: ReadonlyMap<string, FileNow>;
  /** Per file id (null: notes), the later change that makes restoring it a conflict. */
  blocking: ReadonlyMap<string | null, LaterChange>;
  /** The notes to put back; omitted when the restore leaves the notes alone. */
  notes?: { target: string; current: string };
  force: boolean;
}

export interface RestorePlan {
  steps: FileStep[];
  restoreNotes: boolean;
  /** Non-empty only without force; then nothing may be applied. */
  conflicts: RestoreConflict[];
}

/** The steps for one file, or null when it is already in its target state (or gone for good). */
export function fileStep(
  fileId: string,
  now: FileNow | undefined,
  target: SnapshotFile | undefined,
): FileStep | null {
  if (!now) return null;
  if (!target) {
    return now.deleted
      ? null
      : { fileId, title: now.title, delete: true, undelete: false, textOf: null, rename: null };
  }
  const undelete = now.deleted;
  const textOf = now.version === target.version ? null : target.version;
  const rename =
    now.title === target.title && now.folder === target.folder
      ? null
      : { title: target.title, folder: target.folder };
  if (!undelete && textOf === null && rename === null) return null;
  return { fileId, title: now.title, delete: false, undelete, textOf, rename };
}

export function planRestore(input: RestorePlanInput): RestorePlan {
  const steps: FileStep[] = [];
  const conflicts: RestoreConflict[] = [];
  for (const fileId of new Set(input.scope)) {
    const step = fileStep(fileId, input.current.get(fileId), input.target.get(fileId));
    if (!step) continue;
    steps.push(step);
    const later = input.blocking.get(fileId);
    if (later) conflicts.push({ fileId, title: step.title, ...later });
  }
  const restoreNotes = input.notes !== undefined && input.notes.target !== input.notes.current;
  const notesLater = input.blocking.get(null);
  if (restoreNotes && notesLater) conflicts.push({ fileId: null, title: '', ...notesLater });
  return { steps, restoreNotes, conflicts: input.force ? [] : conflicts };
}
