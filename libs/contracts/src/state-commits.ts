import { z } from 'zod';
import { int4, storableText } from './text.ts';

/**
 * Commits with rev (docs/kernel.md "Commits with rev"): the project info and the task board as
 * the author reads and writes them. As with the notes, `version` is the key's rev and a write
 * names the rev it read in `expected_version`; a stale one is merged (per key, per task) or
 * refused with 409 `version_conflict`, `current` and the conflicting `conflicts`.
 */
export const ProjectInfoValue = z.strictObject({
  genre: storableText().trim().max(100).optional(),
  synopsis: storableText().trim().max(2000).optional(),
  style: storableText().trim().max(500).optional(),
  audience: storableText().trim().max(200).optional(),
  target_words: int4().min(0).max(10_000_000).optional(),
});
export const ProjectInfoBody = z.strictObject({
  info: ProjectInfoValue,
  expected_version: int4().nonnegative(),
});
export const ProjectInfoResponse = z.object({
  info: z.record(z.string(), z.unknown()),
  version: z.number().int(),
  /** The write was based on an older rev and merged with what stood. */
  merged: z.boolean().optional(),
});

export const TaskBoardEntry = z.strictObject({
  id: storableText().trim().min(1).max(40),
  title: storableText().trim().min(1).max(200),
  status: z.enum(['todo', 'in_progress', 'done', 'blocked']),
  artifact_file_type: storableText().max(40).optional(),
  artifact_refs: z.array(z.uuid()).max(20).optional(),
  unit_spec: storableText().trim().max(100).optional(),
});
export const TaskBoardBody = z.strictObject({
  tasks: z
    .array(TaskBoardEntry)
    .max(50)
    .refine(
      (tasks) => new Set(tasks.map((task) => task.id)).size === tasks.length,
      'task ids must be unique',
    ),
  expected_version: int4().nonnegative(),
});
export const TaskBoardResponse = z.object({
  tasks: z.array(z.unknown()),
  version: z.number().int(),
  merged: z.boolean().optional(),
});

export const StateKeyName = z.enum(['notes', 'info', 'task_board']);
export const StateCommitsQuery = z.strictObject({
  key: StateKeyName.optional(),
  limit: z.coerce.number().int().min(1).max(100).default(50),
});
export const StateCommitsResponse = z.object({
  commits: z.array(
    z.object({
      key: StateKeyName,
      rev: z.number().int(),
      base_rev: z.number().int(),
      /** `author:<user id>`, `agent:<role>:<run id>` or `baseline` (what stood before logging). */
      source: z.string(),
      merged: z.boolean(),
      value: z.unknown(),
      created_at: z.string(),
    }),
  ),
});
