import { errorBody } from '@quill/contracts';
import type { Branch, RestoreConflict, RestoreOutcome, Snapshot, SnapshotState } from '@quill/db';
import type { FastifyReply } from 'fastify';

/** Response bodies of the snapshot, undo and branch routes (README "Snapshots, undo and branches"). */

export function snapshotView(snapshot: Snapshot) {
  return {
    id: snapshot.id,
    project_id: snapshot.projectId,
    label: snapshot.label,
    kind: snapshot.kind,
    run_id: snapshot.runId,
    created_at: snapshot.createdAt,
    files: snapshot.state.files.length,
  };
}

export function snapshotDetailView(snapshot: Snapshot) {
  return {
    ...snapshotView(snapshot),
    file_list: snapshot.state.files,
    notes_version: snapshot.state.notesVersion,
  };
}

export function branchView(branch: Branch) {
  return {
    id: branch.id,
    parent_id: branch.parentId,
    fork_seq: branch.forkSeq,
    active: branch.active,
    messages: branch.messages,
    first_message: branch.firstMessage,
    created_at: branch.createdAt,
  };
}

export type RestoredView = { files: RestoredFileBody[]; notes: boolean; before_snapshot_id: string | null };
type RestoredFileBody = { file_id: string; title: string; action: string; version: number };

export const NOTHING_RESTORED: RestoredView = { files: [], notes: false, before_snapshot_id: null };

export function restoredView(outcome: Extract<RestoreOutcome, { kind: 'restored' }>): RestoredView {
  return {
    files: outcome.files.map((file) => ({
      file_id: file.fileId,
      title: file.title,
      action: file.action,
      version: file.version,
    })),
    notes: outcome.notes,
    before_snapshot_id: outcome.beforeSnapshotId,
  };
}

/** 409 `restore_conflict` with the catalog body plus what changed since, so the author can decide. */
export function sendRestoreConflict(reply: FastifyReply, conflicts: readonly RestoreConflict[]) {
  const body = errorBody('restore_conflict');
  return reply.code(409).send({
    error: {
      ...body.error,
      conflicts: conflicts.map((conflict) => ({
        file_id: conflict.fileId,
        title: conflict.title,
        changed_by: conflict.changedBy,
        run_id: conflict.runId,
      })),
    },
  });
}

export interface FileDiffEntry {
  file_id: string;
  title: string;
  status: 'added' | 'removed' | 'changed';
  from_version: number | null;
  to_version: number | null;
  renamed: boolean;
}

/** Per file, what differs from one state to another: added, removed, or changed (text or place). */
export function diffStates(from: SnapshotState, to: SnapshotState): FileDiffEntry[] {
  const before = new Map(from.files.map((file) => [file.id, file]));
  const after = new Map(to.files.map((file) => [file.id, file]));
  const entries: FileDiffEntry[] = [];
  for (const file of to.files) {
    const old = before.get(file.id);
    if (!old) {
      entries.push({
        file_id: file.id,
        title: file.title,
        status: 'added',
        from_version: null,
        to_version: file.version,
        renamed: false,
      });
      continue;
    }
    const renamed = old.title !== file.title || old.folder !== file.folder;
    if (old.version !== file.version || renamed)
      entries.push({
        file_id: file.id,
        title: file.title,
        status: 'changed',
        from_version: old.version,
        to_version: file.version,
        renamed,
      });
  }
  for (const file of from.files) {
    if (!after.has(file.id))
      entries.push({
        file_id: file.id,
        title: file.title,
        status: 'removed',
        from_version: file.version,
        to_version: null,
        renamed: false,
      });
  }
  return entries;
}
