import {
  ack,
  type Bus,
  type ConsumerHandle,
  consumeDurable,
  type Disposition,
  ensureUsageConsumer,
  term,
} from '@quill/bus';
import { UsageEnvelope } from '@quill/contracts';
import { isUuid } from '@quill/db';
import { recordUsage } from '@quill/db/billing';
import type { Pool } from 'pg';
import type { Logger } from 'pino';

/**
 * The usage ledger's intake: every model call's usage report (`run.<runId>.usage`) becomes one
 * `usage_records` row. JetStream delivers at least once; the row's unique (run, call index,
 * attempt) makes a redelivery a no-op, so a report is counted exactly once.
 */
export function createUsageHandler(pool: Pool, logger: Logger) {
  return async function handleUsage(usage: UsageEnvelope): Promise<Disposition> {
    // The ledger's ids are uuids; anything else could never insert and would be retried forever.
    if (!isUuid(usage.run_id) || !isUuid(usage.user_id)) return term('usage for a non-uuid run or user');
    const added = await recordUsage(pool, usage);
    if (!added)
      logger.debug({ run_id: usage.run_id, call_index: usage.call_index }, 'usage already recorded');
    return ack;
  };
}

export async function startUsageLedger(
  dependencies: { bus: Bus; pool: Pool; logger: Logger },
  settings: { concurrency: number; ackWaitSeconds: number },
): Promise<ConsumerHandle> {
  const consumer = await ensureUsageConsumer(dependencies.bus, { ackWaitSeconds: settings.ackWaitSeconds });
  return consumeDurable(dependencies.bus, {
    stream: dependencies.bus.names.streams.events,
    consumer,
    schema: UsageEnvelope,
    concurrency: settings.concurrency,
    logger: dependencies.logger,
    spanName: 'billing record usage',
    handle: createUsageHandler(dependencies.pool, dependencies.logger),
  });
}
