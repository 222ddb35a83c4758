import { ack, type DeliveryContext, type Disposition } from '@quill/bus';
import type { BlankFilesTask } from '@quill/contracts';
import { retryTransient } from '@quill/db';
import { deleteEmptyFiles } from '@quill/db/workers';
import type { Pool } from 'pg';
import type { Logger } from 'pino';

/**
 * Removes the blank files an ended run's round left (a refunded round that was stopped or failed,
 * a read-only request), as the router's `BlankFilesTask` names them. Only a file still empty at
 * version 0 goes (`deleteEmptyFiles`), so a file anyone wrote since stays. No fence: the run is
 * over and no worker holds it, which is why it is a task of its own on the writer's queue
 * (docs/decisions/0022-two-writer-tables-and-their-guards.md). A database fault is retried like a
 * step's set-up; a delivery that still fails is naked and redelivered, the last one logged.
 */
export function createBlankFilesHandler(dependencies: {
  pool: Pool;
  logger: Logger;
  writeRetryMs: number;
  maxDeliver: number;
}) {
  const { pool, logger } = dependencies;
  return async function handleBlankFiles(
    task: BlankFilesTask,
    delivery: DeliveryContext,
  ): Promise<Disposition> {
    const log = logger.child({ run_id: task.run_id, reason: task.reason });
    try {
      const removed = await retryTransient(() => deleteEmptyFiles(pool, task.project_id, task.file_ids), {
        maxMs: dependencies.writeRetryMs,
      });
      if (removed.length > 0) log.info({ removed }, 'blank files of the ended round removed');
      return ack;
    } catch (error) {
      if (delivery.deliveryCount < dependencies.maxDeliver) throw error;
      log.error({ err: error, files: task.file_ids }, 'blank files not removed on the last delivery');
      return ack;
    }
  };
}
