import { type AgentRole, filePermission, type TraceExcluded } from '@quill/contracts';
import type { FileSummary } from '@quill/db';
import type { VisibleFile } from './assembler.ts';

/**
 * Information isolation, applied before anything else in a compile (docs/agent-behaviour.md): the files a
 * role may see, each with the permission that lets it, and the ones withheld, for the trace.
 * Rules live in `filePermission` (libs/contracts), shared with query_files.
 */
export function partitionByVisibility(
  files: readonly FileSummary[],
  role: AgentRole,
  reviewTargetIds: ReadonlySet<string>,
): { visible: VisibleFile[]; withheld: TraceExcluded[] } {
  const visible: VisibleFile[] = [];
  const withheld: TraceExcluded[] = [];
  for (const file of files) {
    const permission = filePermission(file, role, { reviewTargetIds });
    if (permission) {
      visible.push({ ...file, permission });
      continue;
    }
    withheld.push({
      source: 'file_index',
      file_id: file.id,
      title: file.title,
      reason: 'visibility',
      detail: file.visibility,
      total_chars: file.chars,
    });
  }
  return { visible, withheld };
}
