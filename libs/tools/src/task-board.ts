import { formatChineseNumber, NUMERAL_CHARACTERS } from '@quill/contracts';
import { listFiles, type Queryable } from '@quill/db';
import { z } from 'zod';
import { FILE_TYPES } from './create-file.ts';

/**
 * The task board (docs/agent-behaviour.md 「任务板声明产物类型和来源」): file tasks declare what they produce, and
 * a task newly marked `done` must be backed by files this request wrote that still exist, are not
 * empty and have the declared type. Numbered units (chapters 1-3) each need their own body file;
 * an outline heading does not prove a chapter.
 */
export const BoardTask = z.strictObject({
  id: z.string().trim().min(1).max(40),
  title: z.string().trim().min(1).max(200),
  status: z.enum(['todo', 'in_progress', 'done', 'blocked']),
  artifact_file_type: z.enum(FILE_TYPES).optional().describe('The file type this task produces.'),
  artifact_refs: z.array(z.uuid()).max(20).optional().describe('Ids of the files that prove it.'),
  unit_spec: z.string().trim().max(100).optional().describe('Numbered units covered, e.g. "1-3" or "2,5".'),
});
export type BoardTask = z.infer<typeof BoardTask>;

export const TaskBoard = z
  .array(BoardTask)
  .max(50)
  .refine((tasks) => new Set(tasks.map((task) => task.id)).size === tasks.length, 'task ids must be unique');

const MAX_UNITS = 200;

/** Problems with the new `done` claims; empty when the board may be saved. */
export async function doneEvidenceProblems(
  db: Queryable,
  projectId: string,
  previous: readonly unknown[],
  next: readonly BoardTask[],
  writtenFileIds: ReadonlySet<string>,
): Promise<string[]> {
  const wasDone = new Set(
    previous
      .filter((task): task is { id: string; status: string } => typeof task === 'object' && task !== null)
      .filter((task) => task.status === 'done')
      .map((task) => task.id),
  );
  const claims = next.filter((task) => task.status === 'done' && !wasDone.has(task.id));
  if (claims.length === 0) return [];
  const written = (await listFiles(db, projectId)).filter(
    (file) => writtenFileIds.has(file.id) && file.content.trim() !== '',
  );
  const problems: string[] = [];
  for (const task of claims) {
    const type = task.artifact_file_type;
    if (!type) {
      problems.push(`task ${task.id}: declare artifact_file_type before marking it done`);
      continue;
    }
    const evidence = written.filter((file) => file.fileType === type);
    for (const ref of task.artifact_refs ?? []) {
      if (!evidence.some((file) => file.id === ref)) {
        problems.push(`task ${task.id}: file ${ref} is not a non-empty ${type} file written in this request`);
      }
    }
    const units = task.unit_spec ? parseUnits(task.unit_spec) : [];
    if (units === null) {
      problems.push(`task ${task.id}: unit_spec must look like "1-3" or "2,5"`);
      continue;
    }
    for (const unit of units) {
      if (!evidence.some((file) => mentionsUnit(file.title, unit))) {
        problems.push(`task ${task.id}: no ${type} file for unit ${unit} was written in this request`);
      }
    }
    if (evidence.length === 0 && units.length === 0 && (task.artifact_refs ?? []).length === 0) {
      problems.push(`task ${task.id}: no non-empty ${type} file was written in this request`);
    }
  }
  return problems;
}

/** "1-3, 5" → [1, 2, 3, 5]; null when malformed or too many. */
export function parseUnits(spec: string): number[] | null {
  const units: number[] = [];
  for (const part of spec.split(/[,，、\s]+/).filter(Boolean)) {
    const match = /^(\d+)(?:\s*[-~–至到]\s*(\d+))?$/.exec(part);
    if (!match) return null;
    const from = Number(match[1]);
    const to = Number(match[2] ?? match[1]);
    if (to < from || units.length + (to - from + 1) > MAX_UNITS) return null;
    for (let unit = from; unit <= to; unit++) units.push(unit);
  }
  return units;
}

/** Whether a title names unit n: 第3章 / 第三章 / Chapter 3 / a standalone 3. */
export function mentionsUnit(title: string, unit: number): boolean {
  if (new RegExp(`第${formatChineseNumber(unit)}(?![${NUMERAL_CHARACTERS}])`).test(title)) return true;
  return new RegExp(`(^|\\D)${unit}(\\D|$)`).test(title);
}
