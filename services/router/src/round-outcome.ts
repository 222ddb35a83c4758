import { type Bus, publishEnvelope } from '@quill/bus';
import { BlankFilesTask, msgIds, type RunStartEnvelope, type StepResult } from '@quill/contracts';

/** The files the round's steps created (their file operations), whatever became of them. */
export function createdFiles(results: readonly StepResult[]): string[] {
  return results.flatMap((result) =>
    (result.file_operations ?? [])
      .filter((operation) => operation.op === 'created')
      .map((operation) => operation.file_id),
  );
}

/**
 * Seed 000 round_outcome: a refunded round that was stopped or failed leaves no blank
 * placeholder behind, nor does a read-only request. The router only names the files: a writer
 * removes the ones still empty and never written (anything with a body, the author's or the AI's,
 * stays), from a durable task on the writer's queue, so it happens after the run ended, whether
 * or not the worker of the round is still alive (docs/decisions/0022-two-writer-tables-and-their-guards.md).
 * The msg id makes a takeover's repeat a no-op.
 */
export async function requestBlankFileRemoval(
  bus: Bus,
  start: RunStartEnvelope,
  fileIds: readonly string[],
  reason: BlankFilesTask['reason'],
): Promise<boolean> {
  const unique = [...new Set(fileIds)];
  if (unique.length === 0) return false;
  await publishEnvelope(
    bus,
    bus.names.blankFiles(start.run_id),
    BlankFilesTask,
    {
      v: 1,
      kind: 'blank_files',
      run_id: start.run_id,
      project_id: start.project_id,
      file_ids: unique,
      reason,
    },
    { msgId: msgIds.blankFiles(start.run_id) },
  );
  return true;
}
