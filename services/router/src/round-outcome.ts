import type { StepResult } from '@quill/contracts';
import { deleteEmptyFiles } from '@quill/db/router';
import type { Pool } from 'pg';

/**
 * Seed 000 round_outcome: a refunded round that was stopped or failed leaves no blank
 * placeholder behind. Only files this run created and never wrote are removed; anything with a
 * body (the author's or the AI's) stays.
 */
export async function removeBlankPlaceholders(
  pool: Pool,
  projectId: string,
  results: readonly StepResult[],
): Promise<string[]> {
  const created = results.flatMap((result) =>
    (result.file_operations ?? [])
      .filter((operation) => operation.op === 'created')
      .map((operation) => operation.file_id),
  );
  return created.length > 0 ? deleteEmptyFiles(pool, projectId, created) : [];
}
