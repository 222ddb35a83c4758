/**
 * The messages a branch sees (docs/kernel.md "Branches"): its own, and along its ancestors those
 * up to the fork point (the smallest fork seq on the way up, since each fork cuts the history it
 * inherits). A session that never branched (no active branch) sees all its messages.
 *
 * `visibleMessagesSql(sessionParam)` is a CTE list naming `visible(id)`: the ids of the session's
 * messages on its active branch's path. Callers join it, so the one rule lives here.
 */
export function visibleMessagesSql(sessionParam: string): string {
  return `branch_path(id, parent_id, upto) AS (
      SELECT b.id, b.parent_id, NULL::bigint FROM session_branches b
      JOIN sessions s ON s.active_branch_id = b.id WHERE s.session_id = ${sessionParam}
      UNION ALL
      SELECT parent.id, parent.parent_id, LEAST(path.upto, child.fork_seq)
      FROM branch_path path
      JOIN session_branches child ON child.id = path.id
      JOIN session_branches parent ON parent.id = child.parent_id
    ), visible(id) AS (
      SELECT m.id FROM messages m
      WHERE m.session_id = ${sessionParam}
        AND (NOT EXISTS (SELECT 1 FROM branch_path)
             OR EXISTS (SELECT 1 FROM branch_path path
                        WHERE path.id = m.branch_id AND (path.upto IS NULL OR m.seq <= path.upto)))
    )`;
}
