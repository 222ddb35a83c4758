import { diff3Merge } from 'node-diff3';

/**
 * The merge rule of a stale structured-state write (docs/kernel.md "Commits with rev"): a
 * three-way line merge of what the writer based its value on, what stands now and what it
 * sends. Disjoint changes merge; overlapping ones are a conflict, and nothing is written.
 */
export type TextMerge = { kind: 'merged'; value: string } | { kind: 'conflict' };

export function mergeText(base: string, current: string, incoming: string): TextMerge {
  if (incoming === current || incoming === base) return { kind: 'merged', value: current };
  if (current === base) return { kind: 'merged', value: incoming };
  const regions = diff3Merge(current.split('\n'), base.split('\n'), incoming.split('\n'), {
    excludeFalseConflicts: true,
  });
  const lines: string[] = [];
  for (const region of regions) {
    if (region.conflict) return { kind: 'conflict' };
    lines.push(...(region.ok ?? []));
  }
  return { kind: 'merged', value: lines.join('\n') };
}
