import { filePermission } from '@quill/contracts';
import { listRunWrittenFileIds } from '@quill/db';
import type { ToolContext } from './types.ts';

/**
 * Information isolation in the tools (docs/agent-behaviour.md): a role never lists, finds or reads a file its
 * visibility hides from it (`author_only`, another role's `private_to:`). The reviewer may read
 * what this run wrote, because it must review it. A hidden file answers exactly like a missing
 * one, so its existence does not leak either.
 */
interface Visible {
  id: string;
  visibility: string;
}

export async function visibleToRole<T>(
  context: Pick<ToolContext, 'pool' | 'runId' | 'role'>,
  items: readonly T[],
  fileOf: (item: T) => Visible = (item) => item as unknown as Visible,
): Promise<T[]> {
  if (items.every((item) => filePermission(fileOf(item), context.role) !== null)) return [...items];
  const reviewTargetIds =
    context.role === 'quality_reviewer'
      ? new Set(await listRunWrittenFileIds(context.pool, context.runId))
      : undefined;
  return items.filter((item) => filePermission(fileOf(item), context.role, { reviewTargetIds }) !== null);
}
