import { randomUUID } from 'node:crypto';
import { QuillError } from '@quill/contracts';
import { getBranch, getSnapshot, type RestoreOutcome, withTransaction } from '@quill/db';
import {
  createBranch,
  ensureActiveBranch,
  restoreSnapshot,
  setActiveBranch,
  setBranchHead,
  takeSnapshot,
} from '@quill/db/gateway';
import { acquireSessionLock, type RedisClient, type RedisKeys, releaseSessionLock } from '@quill/redis';
import type { Pool } from 'pg';

/**
 * Moving a session between branches, files included (docs/kernel.md "Branches"): the branch left
 * behind records its files as a head snapshot, then the files are restored to the target
 * branch's head (or, never left yet, its base) as new author versions. Held under the session
 * lock the run launcher takes, so no run starts or writes on the session meanwhile.
 */

export interface SwitchDependencies {
  pool: Pool;
  redis: RedisClient;
  keys: RedisKeys;
  sessionLockTtlMs: number;
}

export interface SwitchTarget {
  sessionId: string;
  projectId: string;
  userId: string;
  force: boolean;
  /** An existing branch, or a new one forking after `forkSeq` with files from `baseSnapshotId`. */
  branch: { existing: string } | { forkSeq: number; baseSnapshotId: string | null };
}

export type SwitchOutcome =
  | { kind: 'switched'; branchId: string; previousBranchId: string; restore: RestoreOutcome | null }
  | { kind: 'conflict'; restore: Extract<RestoreOutcome, { kind: 'conflict' }> };

export async function switchBranch(
  dependencies: SwitchDependencies,
  target: SwitchTarget,
): Promise<SwitchOutcome> {
  const { pool, redis, keys } = dependencies;
  const lockKey = keys.sessionLock(target.sessionId);
  const token = `branch-switch:${randomUUID()}`;
  if (!(await acquireSessionLock(redis, lockKey, token, dependencies.sessionLockTtlMs)))
    throw new QuillError('session_busy');
  try {
    const previousBranchId = await withTransaction(pool, (client) =>
      ensureActiveBranch(client, target.sessionId),
    );
    const previous = (await getBranch(pool, target.sessionId, previousBranchId))!;
    let snapshotId: string | null;
    if ('existing' in target.branch) {
      const branch = await getBranch(pool, target.sessionId, target.branch.existing);
      if (!branch) throw new QuillError('not_found');
      if (branch.active) return { kind: 'switched', branchId: branch.id, previousBranchId, restore: null };
      snapshotId = branch.headSnapshotId ?? branch.baseSnapshotId;
    } else snapshotId = target.branch.baseSnapshotId;

    let restore: RestoreOutcome | null = null;
    const snapshot = snapshotId ? await getSnapshot(pool, target.projectId, snapshotId) : null;
    // The head goes first: even a forced switch leaves the branch's files recorded to come back to.
    const head = await takeSnapshot(pool, {
      projectId: target.projectId,
      kind: 'branch_head',
      label: `branch ${previousBranchId}`,
      createdBy: target.userId,
    });
    if (snapshot) {
      restore = await restoreSnapshot(pool, {
        projectId: target.projectId,
        snapshot,
        userId: target.userId,
        force: target.force,
        // The author's edits made on the branch being left since it became active.
        conflictsSince: previous.enteredChangeMark,
      });
      if (restore.kind === 'conflict') return { kind: 'conflict', restore };
      if (restore.kind === 'not_found') throw new QuillError('not_found');
    }
    const branchId = await withTransaction(pool, async (client) => {
      if (head) await setBranchHead(client, previousBranchId, head.id);
      const id =
        'existing' in target.branch
          ? target.branch.existing
          : await createBranch(client, {
              sessionId: target.sessionId,
              parentId: previousBranchId,
              forkSeq: target.branch.forkSeq,
              baseSnapshotId: target.branch.baseSnapshotId,
            });
      await setActiveBranch(client, target.sessionId, id);
      return id;
    });
    return { kind: 'switched', branchId, previousBranchId, restore };
  } finally {
    await releaseSessionLock(redis, lockKey, token);
  }
}
