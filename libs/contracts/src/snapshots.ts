import { z } from 'zod';
import { PageQuery } from './product.ts';
import { GenerationMode, UiLanguage } from './roles.ts';
import { storableText } from './text.ts';

/** Snapshots, undo and branches over HTTP (README "Snapshots, undo and branches"). */

export const ProjectSnapshotParams = z.object({ projectId: z.uuid(), snapshotId: z.uuid() });
export const SessionBranchParams = z.object({ sessionId: z.uuid(), branchId: z.uuid() });

export const CreateSnapshotBody = z.strictObject({ label: storableText().trim().max(200).default('') });
/** `force`: restore even over the author's later changes (every version is still kept). */
export const RestoreBody = z.strictObject({ force: z.boolean().default(false) });
export const ListSnapshotsQuery = PageQuery;
/** Diff a snapshot against another one or the current state; with `file_id`, that file's text diff. */
export const SnapshotDiffQuery = z.strictObject({
  against: z.union([z.literal('current'), z.uuid()]).default('current'),
  file_id: z.uuid().optional(),
});

export const SnapshotKind = z.enum(['manual', 'run_start', 'branch_head']);
const SnapshotFileView = z.object({
  id: z.uuid(),
  version: z.number().int(),
  title: z.string(),
  folder: z.string(),
});
export const SnapshotView = z.object({
  id: z.uuid(),
  project_id: z.uuid(),
  label: z.string(),
  kind: SnapshotKind,
  run_id: z.uuid().nullable(),
  created_at: z.string(),
  files: z.number().int(),
});
export const SnapshotResponse = z.object({
  snapshot: SnapshotView.extend({ file_list: z.array(SnapshotFileView), notes_version: z.number().int() }),
});
export const SnapshotListResponse = z.object({
  snapshots: z.array(SnapshotView),
  next_cursor: z.string().nullable(),
});

export const SnapshotFileDiff = z.object({
  file_id: z.uuid(),
  title: z.string(),
  status: z.enum(['added', 'removed', 'changed']),
  from_version: z.number().int().nullable(),
  to_version: z.number().int().nullable(),
  renamed: z.boolean(),
});
export const SnapshotDiffResponse = z.object({
  from: z.uuid(),
  to: z.union([z.literal('current'), z.uuid()]),
  files: z.array(SnapshotFileDiff),
  notes_changed: z.boolean(),
  /** With `file_id`: a unified diff of that file's text from `from` to `to`. */
  text_diff: z.string().optional(),
});

export const RestoredFileView = z.object({
  file_id: z.uuid(),
  title: z.string(),
  action: z.enum(['reverted', 'deleted', 'undeleted', 'renamed']),
  version: z.number().int(),
});
export const RestoreResponse = z.object({
  files: z.array(RestoredFileView),
  notes: z.boolean(),
  /** The state just before this restore, so the restore can be restored away too. */
  before_snapshot_id: z.uuid().nullable(),
});
export const BranchView = z.object({
  id: z.uuid(),
  parent_id: z.uuid().nullable(),
  fork_seq: z.number().int().nullable(),
  active: z.boolean(),
  messages: z.number().int(),
  first_message: z.string().nullable(),
  created_at: z.string(),
});
export const BranchListResponse = z.object({ branches: z.array(BranchView) });
/** Fork the session after one of its messages (on the active path); omit it to fork before the first. */
export const CreateBranchBody = z.strictObject({
  after_message_id: z.uuid().nullable().default(null),
  force: z.boolean().default(false),
});
export const BranchSwitchResponse = z.object({ branch: BranchView, restored: RestoreResponse });
export const RegenerateBody = z.strictObject({
  generation_mode: GenerationMode.default('fast'),
  ui_language: UiLanguage.default('zh'),
  force: z.boolean().default(false),
});
export const RegenerateResponse = z.object({
  run_id: z.uuid(),
  session_id: z.uuid(),
  branch: BranchView,
  /** The branch the previous reply stays on. */
  previous_branch_id: z.uuid(),
});
