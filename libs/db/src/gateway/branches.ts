import { visibleMessagesSql } from '../branch-path.ts';
import { isUuid } from '../ids.ts';
import type { Queryable } from '../pool.ts';

/**
 * Branches of a session (docs/kernel.md "Branches"): a branch records its parent, the message it
 * forks after and the snapshots of its files; messages and runs carry their branch (set by the
 * database on insert from the session's active branch). Nothing is copied to branch.
 */

export interface Branch {
  id: string;
  sessionId: string;
  parentId: string | null;
  /** The parent path's messages up to this seq are this branch's history too; null on the root. */
  forkSeq: number | null;
  baseSnapshotId: string | null;
  headSnapshotId: string | null;
  enteredChangeMark: number;
  createdAt: string;
  /** Messages written on this branch itself. */
  messages: number;
  /** The first message written on it (a regenerate's repeated prompt, a fork's new turn). */
  firstMessage: string | null;
  active: boolean;
}

interface BranchRow {
  id: string;
  session_id: string;
  parent_id: string | null;
  fork_seq: string | number | null;
  base_snapshot_id: string | null;
  head_snapshot_id: string | null;
  entered_change_mark: string | number;
  created_at: string;
  messages: string | number;
  first_message: string | null;
  active: boolean;
}

const SELECT_BRANCH = `SELECT b.id, b.session_id, b.parent_id, b.fork_seq, b.base_snapshot_id, b.head_snapshot_id,
    b.entered_change_mark, b.created_at, s.active_branch_id = b.id AS active,
    (SELECT count(*) FROM messages m WHERE m.branch_id = b.id) AS messages,
    (SELECT m.content FROM messages m WHERE m.branch_id = b.id ORDER BY m.seq LIMIT 1) AS first_message
  FROM session_branches b JOIN sessions s ON s.session_id = b.session_id`;

function toBranch(row: BranchRow): Branch {
  return {
    id: row.id,
    sessionId: row.session_id,
    parentId: row.parent_id,
    forkSeq: row.fork_seq === null ? null : Number(row.fork_seq),
    baseSnapshotId: row.base_snapshot_id,
    headSnapshotId: row.head_snapshot_id,
    enteredChangeMark: Number(row.entered_change_mark),
    createdAt: row.created_at,
    messages: Number(row.messages),
    firstMessage: row.first_message,
    active: row.active === true,
  };
}

export async function listBranches(db: Queryable, sessionId: string): Promise<Branch[]> {
  if (!isUuid(sessionId)) return [];
  const { rows } = await db.query<BranchRow>(
    `${SELECT_BRANCH} WHERE b.session_id = $1 ORDER BY b.created_at, b.id`,
    [sessionId],
  );
  return rows.map(toBranch);
}

export async function getBranch(db: Queryable, sessionId: string, branchId: string): Promise<Branch | null> {
  if (!isUuid(sessionId) || !isUuid(branchId)) return null;
  const { rows } = await db.query<BranchRow>(`${SELECT_BRANCH} WHERE b.session_id = $1 AND b.id = $2`, [
    sessionId,
    branchId,
  ]);
  return rows[0] ? toBranch(rows[0]) : null;
}

/**
 * The session's active branch, creating the root branch first for a session that never branched:
 * its messages so far become the root's. (Its earlier runs keep a null `branch_id`: `runs` is the
 * router's table and nothing reads a run's branch; the trigger stamps runs started from now on.)
 */
export async function ensureActiveBranch(db: Queryable, sessionId: string): Promise<string> {
  const { rows } = await db.query<{ active_branch_id: string | null }>(
    'SELECT active_branch_id FROM sessions WHERE session_id = $1 FOR UPDATE',
    [sessionId],
  );
  const active = rows[0]?.active_branch_id;
  if (active) return active;
  const { rows: created } = await db.query<{ id: string }>(
    'INSERT INTO session_branches (session_id) VALUES ($1) RETURNING id',
    [sessionId],
  );
  const rootId = created[0]!.id;
  await db.query('UPDATE messages SET branch_id = $2 WHERE session_id = $1 AND branch_id IS NULL', [
    sessionId,
    rootId,
  ]);
  // Its entered_change_mark stays 0: every author change so far was made on the root.
  await db.query('UPDATE sessions SET active_branch_id = $2 WHERE session_id = $1', [sessionId, rootId]);
  return rootId;
}

export async function createBranch(
  db: Queryable,
  input: { sessionId: string; parentId: string; forkSeq: number; baseSnapshotId: string | null },
): Promise<string> {
  const { rows } = await db.query<{ id: string }>(
    `INSERT INTO session_branches (session_id, parent_id, fork_seq, base_snapshot_id)
     VALUES ($1, $2, $3, $4) RETURNING id`,
    [input.sessionId, input.parentId, input.forkSeq, input.baseSnapshotId],
  );
  return rows[0]!.id;
}

/** Makes the branch active and remembers from which change on the author's edits are its own. */
export async function setActiveBranch(db: Queryable, sessionId: string, branchId: string): Promise<void> {
  await db.query(
    `WITH s AS (
       UPDATE sessions SET active_branch_id = $2, updated_at = now() WHERE session_id = $1 RETURNING project_id
     )
     UPDATE session_branches SET entered_change_mark =
       COALESCE((SELECT max(c.id) FROM project_changes c WHERE c.project_id = (SELECT project_id FROM s)), 0)
     WHERE id = $2`,
    [sessionId, branchId],
  );
}

/** Records the files' state as the author leaves the branch, for switching back to it. */
export async function setBranchHead(db: Queryable, branchId: string, snapshotId: string): Promise<void> {
  await db.query('UPDATE session_branches SET head_snapshot_id = $2 WHERE id = $1', [branchId, snapshotId]);
}

export interface PathMessage {
  id: string;
  seq: number;
  role: 'user' | 'assistant';
  runId: string | null;
  content: string;
}

/** The messages on the active branch's path, oldest first (branch-path.ts). */
export async function activePathMessages(db: Queryable, sessionId: string): Promise<PathMessage[]> {
  if (!isUuid(sessionId)) return [];
  const { rows } = await db.query<{
    id: string;
    seq: string | number;
    role: 'user' | 'assistant';
    run_id: string | null;
    content: string;
  }>(
    `WITH RECURSIVE ${visibleMessagesSql('$1::uuid')}
     SELECT m.id, m.seq, m.role, m.run_id, m.content FROM messages m JOIN visible v ON v.id = m.id
     ORDER BY m.seq`,
    [sessionId],
  );
  return rows.map((row) => ({
    id: row.id,
    seq: Number(row.seq),
    role: row.role,
    runId: row.run_id,
    content: row.content,
  }));
}

/**
 * Where a fork after `forkSeq` on this path starts its files from: the start snapshot of the
 * first run on the path after it, or null when no run came after (the files as they are now).
 */
export function forkSnapshotRun(path: readonly PathMessage[], forkSeq: number): string | null {
  return (
    path.find((message) => message.seq > forkSeq && message.role === 'user' && message.runId)?.runId ?? null
  );
}
