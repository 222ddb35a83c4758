import { isDeepStrictEqual } from 'node:util';

/**
 * The structured merge of a stale JSON state write (docs/kernel.md "Commits with rev"): three-way
 * per part — per key for the project info, per task (by id) for the task board. A part changed
 * on one side only takes that side's value; changed on both sides to different values, it is a
 * conflict, named so the writer sees what to look at. Nothing is written on a conflict.
 */
export type JsonMerge<T> = { kind: 'merged'; value: T } | { kind: 'conflict'; conflicts: string[] };

type Part = { present: false } | { present: true; value: unknown };

const partOf = (record: ReadonlyMap<string, unknown>, key: string): Part =>
  record.has(key) ? { present: true, value: record.get(key) } : { present: false };

const samePart = (a: Part, b: Part) =>
  a.present === b.present && (!a.present || (b.present && isDeepStrictEqual(a.value, b.value)));

/** The three-way choice of one part, or null when both sides changed it differently. */
function pick(base: Part, current: Part, incoming: Part): Part | null {
  if (samePart(incoming, base) || samePart(incoming, current)) return current;
  if (samePart(current, base)) return incoming;
  return null;
}

function mergeParts(
  keys: readonly string[],
  base: ReadonlyMap<string, unknown>,
  current: ReadonlyMap<string, unknown>,
  incoming: ReadonlyMap<string, unknown>,
): { kind: 'merged'; parts: Map<string, unknown> } | { kind: 'conflict'; conflicts: string[] } {
  const parts = new Map<string, unknown>();
  const conflicts: string[] = [];
  for (const key of keys) {
    const chosen = pick(partOf(base, key), partOf(current, key), partOf(incoming, key));
    if (chosen === null) conflicts.push(key);
    else if (chosen.present) parts.set(key, chosen.value);
  }
  return conflicts.length > 0 ? { kind: 'conflict', conflicts } : { kind: 'merged', parts };
}

const unique = (keys: readonly string[]) => [...new Set(keys)];

/** Project info: per top-level key. */
export function mergeRecord(
  base: Record<string, unknown>,
  current: Record<string, unknown>,
  incoming: Record<string, unknown>,
): JsonMerge<Record<string, unknown>> {
  const keys = unique([...Object.keys(current), ...Object.keys(incoming), ...Object.keys(base)]);
  const merged = mergeParts(
    keys,
    new Map(Object.entries(base)),
    new Map(Object.entries(current)),
    new Map(Object.entries(incoming)),
  );
  if (merged.kind === 'conflict') return merged;
  return { kind: 'merged', value: Object.fromEntries(merged.parts) };
}

const taskId = (task: unknown, index: number): string =>
  typeof task === 'object' && task !== null && typeof (task as { id?: unknown }).id === 'string'
    ? (task as { id: string }).id
    : `#${index}`;

const byId = (tasks: readonly unknown[]) => new Map(tasks.map((task, index) => [taskId(task, index), task]));

/**
 * The task board: per task, keyed by its id. The merged board keeps the order of the side that
 * reordered (the board that stands when both did), with the other side's new tasks after it.
 * Conflicts are named `task:<id>`.
 */
export function mergeTasks(
  base: readonly unknown[],
  current: readonly unknown[],
  incoming: readonly unknown[],
): JsonMerge<unknown[]> {
  const ids = (tasks: readonly unknown[]) => tasks.map(taskId);
  // Only one side may reorder: the one that did (the board that stands when both did).
  const first = isDeepStrictEqual(ids(current), ids(base)) ? incoming : current;
  const keys = unique([...ids(first), ...ids(current), ...ids(incoming), ...ids(base)]);
  const merged = mergeParts(keys, byId(base), byId(current), byId(incoming));
  if (merged.kind === 'conflict') {
    return { kind: 'conflict', conflicts: merged.conflicts.map((id) => `task:${id}`) };
  }
  return {
    kind: 'merged',
    value: keys.filter((id) => merged.parts.has(id)).map((id) => merged.parts.get(id)),
  };
}
