import { z } from 'zod';

/**
 * Where an answer's material came from (docs/protocol.md, sources): produced by the tools that
 * read project material, never written by the model. A tool_result frame carries the sources of
 * its call; the `done` frame carries the run's sources, de-duplicated.
 */
export const Source = z.object({
  kind: z.literal('file'),
  file_id: z.string(),
  title: z.string(),
  /** The version that was read (the newest one when the run read the file more than once). */
  version: z.number().int().nonnegative(),
  /** The whole text was read at least once. */
  full: z.boolean(),
  /** The character ranges read (`start-end`), when not the whole text; a search hit has none. */
  ranges: z.array(z.string()).optional(),
});
export type Source = z.infer<typeof Source>;

/** One source per file, in first-read order: the newest version, full when any read was full. */
export function mergeSources(...lists: ReadonlyArray<readonly Source[] | undefined>): Source[] {
  const merged = new Map<string, Source>();
  for (const list of lists) {
    for (const source of list ?? []) {
      const seen = merged.get(source.file_id);
      if (!seen) {
        merged.set(source.file_id, { ...source, ...(source.ranges ? { ranges: [...source.ranges] } : {}) });
        continue;
      }
      const full = seen.full || source.full;
      const ranges = [...new Set([...(seen.ranges ?? []), ...(source.ranges ?? [])])];
      const newer = source.version > seen.version ? source : seen;
      const { ranges: _dropped, ...rest } = newer;
      merged.set(source.file_id, {
        ...rest,
        full,
        ...(!full && ranges.length > 0 ? { ranges } : {}),
      });
    }
  }
  return [...merged.values()];
}
