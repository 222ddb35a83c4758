import { isUuid } from '../ids.ts';
import type { Queryable } from '../pool.ts';
import { mergeText } from '../state-merge.ts';

/**
 * Commits with rev (docs/kernel.md "Commits with rev"): the one path structured project state
 * is written through, by the author's editor and by the agent alike. A commit names the rev it
 * is based on; the same rev commits, a stale one is merged when the changes are disjoint or
 * refused with what stands now. Every commit is recorded in `state_commits` with its source.
 * Today the keyed state is the project notes (`projects.notes`, rev `projects.notes_version`).
 */
export type StateKey = 'notes';

/** Who writes: the author (with their project role) or an agent role within a run. */
export type StateWriter =
  | { kind: 'author'; userId: string; memberRole: 'owner' | 'editor' | 'viewer' }
  | { kind: 'agent'; role: string; runId: string };

export type CommitOutcome =
  | { kind: 'committed'; rev: number; value: string; merged: boolean }
  | { kind: 'conflict'; rev: number; value: string }
  | { kind: 'forbidden' }
  | { kind: 'not_found' };

/** The permission rule: viewers never write; the agent writes only through its tool's rules. */
export function mayCommit(_key: StateKey, writer: StateWriter): boolean {
  return writer.kind === 'agent' || writer.memberRole !== 'viewer';
}

export function sourceOf(writer: StateWriter): string {
  return writer.kind === 'author' ? `author:${writer.userId}` : `agent:${writer.role}:${writer.runId}`;
}

/**
 * Commits a new value of the project's notes. Run inside a transaction: the project row stays
 * locked from the rev check to the write. `maxChars` bounds a merged value as the editor's own
 * limit bounds a direct one.
 */
export async function commitProjectNotes(
  db: Queryable,
  input: { projectId: string; baseRev: number; value: string; writer: StateWriter; maxChars?: number },
): Promise<CommitOutcome> {
  if (!mayCommit('notes', input.writer)) return { kind: 'forbidden' };
  if (!isUuid(input.projectId)) return { kind: 'not_found' };
  const { rows } = await db.query<{ notes: string; notes_version: number }>(
    'SELECT notes, notes_version FROM projects WHERE id = $1 AND deleted_at IS NULL FOR UPDATE',
    [input.projectId],
  );
  const stored = rows[0];
  if (!stored) return { kind: 'not_found' };
  const rev = stored.notes_version;
  // The value that stands is the base later stale writers merge against: keep it in the log
  // even when it was written before commits were recorded.
  await recordCommit(db, input.projectId, rev, rev, stored.notes, 'baseline', false);
  let value = input.value;
  let merged = false;
  if (input.baseRev !== rev) {
    const base = input.baseRev < rev ? await committedValue(db, input.projectId, input.baseRev) : null;
    const outcome =
      base === null ? { kind: 'conflict' as const } : mergeText(base, stored.notes, input.value);
    if (outcome.kind === 'conflict' || outcome.value.length > (input.maxChars ?? Number.POSITIVE_INFINITY)) {
      return { kind: 'conflict', rev, value: stored.notes };
    }
    value = outcome.value;
    merged = true;
  }
  if (value === stored.notes) return { kind: 'committed', rev, value, merged };
  await db.query('UPDATE projects SET notes = $2, notes_version = $3, updated_at = now() WHERE id = $1', [
    input.projectId,
    value,
    rev + 1,
  ]);
  await recordCommit(db, input.projectId, rev + 1, input.baseRev, value, sourceOf(input.writer), merged);
  return { kind: 'committed', rev: rev + 1, value, merged };
}

export interface StateCommit {
  rev: number;
  baseRev: number;
  value: unknown;
  source: string;
  merged: boolean;
  createdAt: string;
}

/** The commit log of one key, newest first. */
export async function listStateCommits(
  db: Queryable,
  projectId: string,
  key: StateKey,
  limit = 50,
): Promise<StateCommit[]> {
  if (!isUuid(projectId)) return [];
  const { rows } = await db.query<{
    rev: number;
    base_rev: number;
    value: unknown;
    source: string;
    merged: boolean;
    created_at: string;
  }>(
    `SELECT rev, base_rev, value, source, merged, created_at FROM state_commits
     WHERE project_id = $1 AND key = $2 ORDER BY rev DESC LIMIT $3`,
    [projectId, key, limit],
  );
  return rows.map((row) => ({
    rev: row.rev,
    baseRev: row.base_rev,
    value: row.value,
    source: row.source,
    merged: row.merged,
    createdAt: row.created_at,
  }));
}

async function committedValue(db: Queryable, projectId: string, rev: number): Promise<string | null> {
  const { rows } = await db.query<{ value: unknown }>(
    `SELECT value FROM state_commits WHERE project_id = $1 AND key = 'notes' AND rev = $2`,
    [projectId, rev],
  );
  const value = rows[0]?.value;
  return typeof value === 'string' ? value : null;
}

async function recordCommit(
  db: Queryable,
  projectId: string,
  rev: number,
  baseRev: number,
  value: string,
  source: string,
  merged: boolean,
): Promise<void> {
  await db.query(
    `INSERT INTO state_commits (project_id, key, rev, base_rev, value, source, merged)
     VALUES ($1, 'notes', $2, $3, to_jsonb($4::text), $5, $6)
     ON CONFLICT (project_id, key, rev) DO NOTHING`,
    [projectId, rev, baseRev, value, source, merged],
  );
}
