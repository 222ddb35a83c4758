import type { Breadcrumbs, FileRef, StepResult } from '@quill/contracts';

/**
 * Folds a run's file operations into the breadcrumbs stored with its assistant reply (docs/agent-behaviour.md
 * 跨轮记忆): each file once, under what matters most for the next turn — deleted over created over
 * edited over read — with its latest title. Steps from workers that report no operations still
 * contribute their `<file>` writes as edits.
 */
export function breadcrumbsFor(results: readonly StepResult[]): Breadcrumbs | undefined {
  const rank = { read: 0, edited: 1, created: 2, deleted: 3 } as const;
  const files = new Map<string, { op: keyof typeof rank; title: string }>();
  const note = (op: keyof typeof rank, fileId: string, title: string) => {
    const known = files.get(fileId);
    const keep = known && rank[known.op] > rank[op] ? known.op : op;
    files.set(fileId, { op: keep, title: title || known?.title || '' });
  };
  for (const result of [...results].sort((a, b) => a.step - b.step)) {
    const operations =
      result.file_operations ??
      result.files_written.map((write) => ({
        op: 'edited' as const,
        file_id: write.file_id,
        title: write.title,
      }));
    for (const operation of operations) note(operation.op, operation.file_id, operation.title);
  }
  if (files.size === 0) return undefined;
  const of = (op: keyof typeof rank): FileRef[] =>
    [...files.entries()]
      .filter(([, file]) => file.op === op)
      .map(([fileId, file]) => ({ file_id: fileId, title: file.title }));
  return { v: 1, created: of('created'), edited: of('edited'), deleted: of('deleted'), read: of('read') };
}
