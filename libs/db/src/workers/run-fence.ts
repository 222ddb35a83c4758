import type { Phase } from '@quill/contracts';
import type pg from 'pg';
import { isUuid } from '../ids.ts';
import { withTransaction } from '../pool.ts';
import { type RetryPolicy, retryTransient } from '../transient.ts';

/** How long a fenced write keeps retrying a database fault before the step gives up. */
export const DEFAULT_WRITE_RETRY_MS = 30_000;

/** A write from a worker that no longer owns the run (docs/architecture.md: a lost lease must not commit). */
export class RunFencedError extends Error {
  readonly runId: string;
  readonly expectedEpoch: number;
  /** null when the run does not exist. */
  readonly actualPhase: Phase | null;
  readonly actualEpoch: number | null;
  constructor(runId: string, expectedEpoch: number, actualPhase: Phase | null, actualEpoch: number | null) {
    super(
      actualPhase === null
        ? `run ${runId} does not exist`
        : `run ${runId} is ${actualPhase} at epoch ${actualEpoch}; writer holds epoch ${expectedEpoch}`,
    );
    this.name = new.target.name;
    this.runId = runId;
    this.expectedEpoch = expectedEpoch;
    this.actualPhase = actualPhase;
    this.actualEpoch = actualEpoch;
  }
}

export interface RunFence {
  runId: string;
  epoch: number;
  /**
   * Transient database faults (connection reset, too many clients, serialization failures) are
   * retried with back-off for this long (default DEFAULT_WRITE_RETRY_MS; 0 disables). Each try is
   * a fresh transaction re-checking the fence, so a lease lost meanwhile is still refused.
   */
  retryMs?: number;
  onRetry?: RetryPolicy['onRetry'];
}

/**
 * Takes a redelivered task's run over: the new epoch fences out every write from the previous
 * worker. `run_fences` belongs to the workers (docs/architecture.md "What each service owns"); the
 * run row is only locked (FOR NO KEY UPDATE), so the bump waits for an in-flight fenced write of
 * the old worker, which holds it FOR SHARE. Returns the new epoch, or null when the run is
 * unknown or not `running`.
 */
export async function bumpRunEpoch(pool: pg.Pool, runId: string): Promise<number | null> {
  if (!isUuid(runId)) return null;
  return withTransaction(pool, async (client) => {
    const run = await client.query(
      `SELECT 1 FROM runs WHERE run_id = $1 AND phase = 'running' FOR NO KEY UPDATE`,
      [runId],
    );
    if (run.rowCount !== 1) return null;
    const { rows } = await client.query<{ epoch: number }>(
      `INSERT INTO run_fences AS f (run_id, epoch) VALUES ($1, 1)
       ON CONFLICT (run_id) DO UPDATE SET epoch = f.epoch + 1, updated_at = now() RETURNING epoch`,
      [runId],
    );
    return rows[0]!.epoch;
  });
}

/**
 * Runs fn in a transaction that commits only while the run is `running` at the caller's epoch.
 * The run row is held FOR SHARE until commit, so a takeover (bumpRunEpoch) or finishRun waits for
 * an in-flight write, and every write that starts after them is refused. fn may run more than once
 * (see RunFence.retryMs): it must only touch the database through the client it is given.
 */
export async function withRunFence<T>(
  pool: pg.Pool,
  fence: RunFence,
  fn: (client: pg.PoolClient) => Promise<T>,
): Promise<T> {
  if (!isUuid(fence.runId)) throw new RunFencedError(fence.runId, fence.epoch, null, null);
  const maxMs = fence.retryMs ?? DEFAULT_WRITE_RETRY_MS;
  const once = () => fencedTransaction(pool, fence, fn);
  if (maxMs <= 0) return once();
  return retryTransient(once, { maxMs, ...(fence.onRetry ? { onRetry: fence.onRetry } : {}) });
}

function fencedTransaction<T>(
  pool: pg.Pool,
  fence: RunFence,
  fn: (client: pg.PoolClient) => Promise<T>,
): Promise<T> {
  return withTransaction(pool, async (client) => {
    // One call (migration 0062): it takes the run row FOR SHARE, and only then reads the phase
    // and the epoch, in a statement of their own, so a check that waited for a takeover's bump
    // sees the epoch the bump committed (read in the locking statement, it came from a snapshot
    // taken before the wait, and the late writer passed). The same call attributes this
    // transaction's file and notes changes to the run (the project_changes trigger reads
    // quill.run_id), so undo knows what the run did (docs/kernel.md "Snapshots and undo"). Set only
    // when the row is there; a refused fence rolls it back.
    const { rows } = await client.query<{ phase: Phase; epoch: number }>(
      'SELECT run_phase AS phase, run_epoch AS epoch FROM quill_run_fence($1, $2)',
      [fence.runId, fence.runId],
    );
    const run = rows[0];
    if (run === undefined) throw new RunFencedError(fence.runId, fence.epoch, null, null);
    if (run.phase !== 'running' || run.epoch !== fence.epoch) {
      throw new RunFencedError(fence.runId, fence.epoch, run.phase, run.epoch);
    }
    return fn(client);
  });
}

/**
 * A fenced write that is one statement: the fence check (the same `quill_run_fence` call, which
 * takes the run row FOR SHARE until the statement commits) and the write in one round trip,
 * instead of BEGIN, the check, the write and COMMIT. `write` is a data-modifying CTE over the
 * `fence` CTE (`INSERT … SELECT … FROM fence WHERE fenced`), so it writes nothing unless the run
 * is `running` at the writer's epoch; `$1` is the run id and `$2` the epoch, its own parameters
 * follow. Refused like withRunFence (RunFencedError), and retried on transient faults alike.
 */
export async function fencedStatement(
  pool: pg.Pool,
  fence: RunFence,
  write: { cte: string; params: readonly unknown[] },
): Promise<void> {
  if (!isUuid(fence.runId)) throw new RunFencedError(fence.runId, fence.epoch, null, null);
  const once = async () => {
    const { rows } = await pool.query<{ phase: Phase; epoch: number; written: boolean }>(
      `WITH fence AS (
         SELECT run_phase, run_epoch, run_phase = 'running' AND run_epoch = $2 AS fenced
         FROM quill_run_fence($1::uuid, $1::uuid::text)
       ), written AS (${write.cte})
       SELECT run_phase AS phase, run_epoch AS epoch, EXISTS (SELECT 1 FROM written) AS written FROM fence`,
      [fence.runId, fence.epoch, ...write.params],
    );
    const run = rows[0];
    if (run === undefined) throw new RunFencedError(fence.runId, fence.epoch, null, null);
    if (!run.written) throw new RunFencedError(fence.runId, fence.epoch, run.phase, run.epoch);
  };
  const maxMs = fence.retryMs ?? DEFAULT_WRITE_RETRY_MS;
  if (maxMs <= 0) return once();
  return retryTransient(once, { maxMs, ...(fence.onRetry ? { onRetry: fence.onRetry } : {}) });
}
