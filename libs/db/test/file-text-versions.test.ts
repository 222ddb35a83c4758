import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * The context service keeps file texts by file id and version (docs/decisions/0061) and trusts
 * that a file's text never changes without its version. This holds that rule over every
 * statement in the code that writes `files`: one that sets `content` must also move `version`.
 */
const roots = [join(import.meta.dirname, '../src'), join(import.meta.dirname, '../../../services')];

function sources(directory: string): string[] {
  return readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const path = join(directory, entry.name);
    if (entry.isDirectory())
      return entry.name === 'node_modules' || entry.name === 'test' ? [] : sources(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

// From `UPDATE files` (the table, not files_…) to the end of its SET list.
const UPDATE_FILES =
  /UPDATE\s+files\s+(?:AS\s+\w+\s+|\w+\s+)?SET\s([\s\S]*?)(?:\bWHERE\b|\bFROM\b|\bRETURNING\b|`|')/gi;

describe('file texts and versions', () => {
  const updates = roots
    .flatMap(sources)
    .flatMap((path) =>
      [...readFileSync(path, 'utf8').matchAll(UPDATE_FILES)].map((match) => ({ path, set: match[1]! })),
    );

  it('finds the statements that write files (the check is not empty)', () => {
    expect(updates.filter((update) => /\bcontent\s*=/.test(update.set)).length).toBeGreaterThanOrEqual(3);
  });

  it('moves the version in every statement that sets the content', () => {
    const unversioned = updates.filter(
      (update) => /\bcontent\s*=/.test(update.set) && !/\bversion\s*=\s*version\s*\+\s*1\b/.test(update.set),
    );
    expect(unversioned).toEqual([]);
  });
});
