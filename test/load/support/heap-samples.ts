/**
 * Sums a sampling heap profile (the DevTools protocol's `HeapProfiler.stopSampling`) by function:
 * each sample's bytes go to the function that allocated them, or with `inclusive` also to every
 * function on the stack above it (once per sample, however often a recursive one appears).
 */

export interface HeapProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children: HeapProfileNode[];
}

export interface SamplingHeapProfile {
  head: HeapProfileNode;
  samples: Array<{ size: number; nodeId: number }>;
}

/** `name path:line`, the path cut to where the repository's or a package's own part starts. */
export function functionLabel(callFrame: { functionName: string; url: string; lineNumber?: number }): string {
  const { functionName, url, lineNumber } = callFrame;
  const path = url.replace(/^.*\/(node_modules|libs|services|test)\//, '$1/');
  return `${functionName || '(anonymous)'} ${path}:${(lineNumber ?? -1) + 1}`;
}

export function allocationsByFunction(
  profile: SamplingHeapProfile,
  options: { inclusive: boolean },
): { total: number; bytes: Map<string, number> } {
  const nodes = new Map<number, HeapProfileNode>();
  const parentOf = new Map<number, number>();
  const pending = [profile.head];
  for (let node = pending.pop(); node; node = pending.pop()) {
    nodes.set(node.id, node);
    for (const child of node.children) {
      parentOf.set(child.id, node.id);
      pending.push(child);
    }
  }
  const bytes = new Map<string, number>();
  let total = 0;
  for (const sample of profile.samples) {
    total += sample.size;
    const counted = new Set<string>();
    for (let id: number | undefined = sample.nodeId; id !== undefined; id = parentOf.get(id)) {
      const label = functionLabel(nodes.get(id)!.callFrame);
      if (!counted.has(label)) bytes.set(label, (bytes.get(label) ?? 0) + sample.size);
      counted.add(label);
      if (!options.inclusive) break;
    }
  }
  return { total, bytes };
}
