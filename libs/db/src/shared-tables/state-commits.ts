import { isDeepStrictEqual } from 'node:util';
import { isUuid } from '../ids.ts';
import type { Queryable } from '../pool.ts';
import { mergeText } from '../state-merge.ts';
import { mergeRecord, mergeTasks } from '../state-merge-json.ts';

/**
 * Commits with rev (docs/kernel.md "Commits with rev"): the one path structured project state
 * is written through, by the author and by the agent alike. A commit names the rev it is based
 * on; the same rev commits, a stale one is merged when the changes are disjoint or refused with
 * what stands now. Every commit is recorded in `state_commits` with its source. The keyed state:
 * the notes (text, merged by lines), the info (merged per key) and the task board (per task).
 */
export type StateKey = 'notes' | 'info' | 'task_board';
export const STATE_KEYS: readonly StateKey[] = ['notes', 'info', 'task_board'];

/** Who writes: the author (with their project role) or an agent role within a run. */
export type StateWriter =
  | { kind: 'author'; userId: string; memberRole: 'owner' | 'editor' | 'viewer' }
  | { kind: 'agent'; role: string; runId: string };

export type CommitOutcome<T = string> =
  | { kind: 'committed'; rev: number; value: T; merged: boolean }
  | { kind: 'conflict'; rev: number; value: T; conflicts: string[] }
  | { kind: 'forbidden' }
  | { kind: 'not_found' };

export type StateValue<K extends StateKey> = K extends 'notes'
  ? string
  : K extends 'info'
    ? Record<string, unknown>
    : unknown[];

type Merge = { kind: 'merged'; value: unknown } | { kind: 'conflict'; conflicts: string[] };

/** Where each key lives on the project row, and how a stale write of it merges. */
const KEYS: Record<
  StateKey,
  { column: string; revColumn: string; merge(b: never, c: never, i: never): Merge }
> = {
  notes: {
    column: 'notes',
    revColumn: 'notes_version',
    merge: (base: string, current: string, incoming: string) => {
      const merged = mergeText(base, current, incoming);
      return merged.kind === 'merged' ? merged : { kind: 'conflict', conflicts: ['notes'] };
    },
  },
  info: { column: 'info', revColumn: 'info_version', merge: mergeRecord },
  task_board: { column: 'task_board', revColumn: 'task_board_version', merge: mergeTasks },
};

const isShaped = (key: StateKey, value: unknown): boolean =>
  key === 'notes'
    ? typeof value === 'string'
    : key === 'info'
      ? typeof value === 'object' && value !== null && !Array.isArray(value)
      : Array.isArray(value);

/** The permission rule: viewers never write; the agent writes only through its tool's rules. */
export function mayCommit(_key: StateKey, writer: StateWriter): boolean {
  return writer.kind === 'agent' || writer.memberRole !== 'viewer';
}

export function sourceOf(writer: StateWriter): string {
  return writer.kind === 'author' ? `author:${writer.userId}` : `agent:${writer.role}:${writer.runId}`;
}

/**
 * Commits a new value of one key. Run inside a transaction: the project row stays locked from
 * the rev check to the write. `accept` bounds a merged value as the caller's own limit bounds a
 * direct one (a merged value it refuses is a conflict).
 */
export async function commitState<K extends StateKey>(
  db: Queryable,
  input: {
    projectId: string;
    key: K;
    baseRev: number;
    value: StateValue<K>;
    writer: StateWriter;
    accept?: (value: StateValue<K>) => boolean;
  },
): Promise<CommitOutcome<StateValue<K>>> {
  const { key } = input;
  if (!mayCommit(key, input.writer)) return { kind: 'forbidden' };
  if (!isUuid(input.projectId)) return { kind: 'not_found' };
  const { column, revColumn, merge } = KEYS[key];
  const { rows } = await db.query<{ value: StateValue<K>; rev: number }>(
    `SELECT ${column} AS value, ${revColumn} AS rev FROM projects
     WHERE id = $1 AND deleted_at IS NULL FOR UPDATE`,
    [input.projectId],
  );
  const stored = rows[0];
  if (!stored) return { kind: 'not_found' };
  const { rev } = stored;
  // The value that stands is the base later stale writers merge against: keep it in the log
  // even when it was written before commits were recorded.
  await recordCommit(db, input.projectId, key, rev, rev, stored.value, 'baseline', false);
  let value = input.value;
  let merged = false;
  if (input.baseRev !== rev) {
    const base = input.baseRev < rev ? await committedValue(db, input.projectId, key, input.baseRev) : null;
    const outcome: Merge =
      base === null || !isShaped(key, base)
        ? { kind: 'conflict', conflicts: [key] }
        : (merge as (b: unknown, c: unknown, i: unknown) => Merge)(base, stored.value, input.value);
    if (outcome.kind === 'conflict') {
      return { kind: 'conflict', rev, value: stored.value, conflicts: outcome.conflicts };
    }
    value = outcome.value as StateValue<K>;
    if (input.accept && !input.accept(value)) {
      return { kind: 'conflict', rev, value: stored.value, conflicts: [key] };
    }
    merged = true;
  }
  if (isDeepStrictEqual(value, stored.value)) return { kind: 'committed', rev, value, merged };
  await db.query(
    `UPDATE projects SET ${column} = ${key === 'notes' ? "$2::jsonb #>> '{}'" : '$2::jsonb'},
       ${revColumn} = $3, updated_at = now() WHERE id = $1`,
    [input.projectId, JSON.stringify(value), rev + 1],
  );
  await recordCommit(db, input.projectId, key, rev + 1, input.baseRev, value, sourceOf(input.writer), merged);
  return { kind: 'committed', rev: rev + 1, value, merged };
}

/** The notes as before: a commit of the `notes` key, bounded by the editor's limit. */
export function commitProjectNotes(
  db: Queryable,
  input: { projectId: string; baseRev: number; value: string; writer: StateWriter; maxChars?: number },
): Promise<CommitOutcome<string>> {
  const maxChars = input.maxChars ?? Number.POSITIVE_INFINITY;
  return commitState(db, {
    projectId: input.projectId,
    key: 'notes',
    baseRev: input.baseRev,
    value: input.value,
    writer: input.writer,
    accept: (value) => value.length <= maxChars,
  });
}

/**
 * The rev an agent's write of `key` is based on: what it last committed itself in this run, else
 * what stood when its run started — so a change the author made while the run worked is merged
 * with the agent's, or refused, never overwritten by a value the agent built before seeing it.
 */
export async function agentBaseRev(
  db: Queryable,
  input: { projectId: string; key: StateKey; runId: string },
): Promise<number> {
  const { rows } = await db.query<{ own: number | null; before: number | null; oldest: number | null }>(
    `SELECT
       (SELECT max(rev) FROM state_commits WHERE project_id = $1 AND key = $2 AND source LIKE $4) AS own,
       (SELECT max(c.rev) FROM state_commits c, runs r
         WHERE c.project_id = $1 AND c.key = $2 AND r.run_id::text = $3 AND c.created_at <= r.created_at) AS before,
       (SELECT min(rev) FROM state_commits WHERE project_id = $1 AND key = $2) AS oldest`,
    [input.projectId, input.key, input.runId, `agent:%:${input.runId}`],
  );
  const row = rows[0];
  if (row?.own != null) return row.own;
  if (row?.before != null) return row.before;
  if (row?.oldest != null) return row.oldest;
  // With no log at all nobody committed since the run started: what stands is its base.
  return (await readState(db, input.projectId, input.key))?.rev ?? 0;
}

/** One key's value and rev as they stand (null: no such live project). */
export async function readState<K extends StateKey>(
  db: Queryable,
  projectId: string,
  key: K,
): Promise<{ value: StateValue<K>; rev: number } | null> {
  if (!isUuid(projectId)) return null;
  const { column, revColumn } = KEYS[key];
  const { rows } = await db.query<{ value: StateValue<K>; rev: number }>(
    `SELECT ${column} AS value, ${revColumn} AS rev FROM projects WHERE id = $1 AND deleted_at IS NULL`,
    [projectId],
  );
  return rows[0] ?? null;
}

export interface StateCommit {
  key: StateKey;
  rev: number;
  baseRev: number;
  value: unknown;
  source: string;
  merged: boolean;
  createdAt: string;
}

/** The commit log of one key (or of every key), newest first. */
export async function listStateCommits(
  db: Queryable,
  projectId: string,
  key: StateKey | null,
  limit = 50,
): Promise<StateCommit[]> {
  if (!isUuid(projectId)) return [];
  const { rows } = await db.query<{
    key: StateKey;
    rev: number;
    base_rev: number;
    value: unknown;
    source: string;
    merged: boolean;
    created_at: string;
  }>(
    `SELECT key, rev, base_rev, value, source, merged, created_at FROM state_commits
     WHERE project_id = $1 AND ($2::text IS NULL OR key = $2)
     ORDER BY created_at DESC, rev DESC LIMIT $3`,
    [projectId, key, limit],
  );
  return rows.map((row) => ({
    key: row.key,
    rev: row.rev,
    baseRev: row.base_rev,
    value: row.value,
    source: row.source,
    merged: row.merged,
    createdAt: row.created_at,
  }));
}

async function committedValue(
  db: Queryable,
  projectId: string,
  key: StateKey,
  rev: number,
): Promise<unknown> {
  const { rows } = await db.query<{ value: unknown }>(
    'SELECT value FROM state_commits WHERE project_id = $1 AND key = $2 AND rev = $3',
    [projectId, key, rev],
  );
  return rows[0]?.value ?? null;
}

async function recordCommit(
  db: Queryable,
  projectId: string,
  key: StateKey,
  rev: number,
  baseRev: number,
  value: unknown,
  source: string,
  merged: boolean,
): Promise<void> {
  await db.query(
    `INSERT INTO state_commits (project_id, key, rev, base_rev, value, source, merged)
     VALUES ($1, $2, $3, $4, $5::jsonb, $6, $7)
     ON CONFLICT (project_id, key, rev) DO NOTHING`,
    [projectId, key, rev, baseRev, JSON.stringify(value), source, merged],
  );
}
