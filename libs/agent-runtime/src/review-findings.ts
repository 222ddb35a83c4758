import type { StepResult, TaskEnvelope } from '@quill/contracts';
import { type RunFence, withRunFence } from '@quill/db';
import { attachReviewFindings } from '@quill/db/workers';
import type { Pool } from 'pg';

/**
 * A reviewer step attaches its own findings to the artifact versions it judged (docs/kernel.md
 * "Artifacts and acceptance"), inside the run's fence, before its result is published: the
 * artifacts are written by the AI's write path and the author's decisions only
 * (docs/decisions/0022-two-writer-tables-and-their-guards.md). Idempotent per (run, step), so a
 * redelivered step that publishes a journaled result attaches nothing twice.
 */
export async function attachOwnFindings(
  pool: Pool,
  fence: RunFence,
  task: TaskEnvelope,
  result: StepResult,
): Promise<void> {
  if (result.role !== 'quality_reviewer' || result.outcome !== 'completed') return;
  await withRunFence(pool, fence, (client) =>
    attachReviewFindings(client, {
      runId: task.run_id,
      step: result.step,
      role: result.role,
      text: result.final_text,
    }),
  );
}
