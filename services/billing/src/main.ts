import { serveRequests } from '@quill/bus';
import type { BillingReserveReply as ReserveReply } from '@quill/contracts';
import {
  BillingReserveReply,
  BillingReserveRequest,
  BillingSettleReply,
  BillingSettleRequest,
} from '@quill/contracts';
import { startService } from '@quill/service-kit';
import { serveGrants } from './grants.ts';
import { reserveCredit } from './ledger.ts';
import { createReconciler } from './reconciler.ts';
import { createSettleHandler } from './settlement.ts';
import { startUsageLedger } from './usage-ledger.ts';

const runtime = await startService('billing');
const { bus, config, logger, pool } = runtime;

const reserve = serveRequests(
  bus,
  bus.names.billingReserve,
  { request: BillingReserveRequest, reply: BillingReserveReply },
  {
    async handle(request): Promise<ReserveReply> {
      const result = await reserveCredit(pool, {
        runId: request.run_id,
        userId: request.user_id,
        defaultCredits: config.QUILL_DEFAULT_CREDITS,
      });
      return result.ok
        ? { v: 1, ok: true, credits_left: result.creditsLeft }
        : { v: 1, ok: false, code: result.code };
    },
    invalidReply: { v: 1, ok: false, code: 'invalid_request' },
    failureReply: { v: 1, ok: false, code: 'service_unavailable' },
  },
  logger,
);

const settleRun = createSettleHandler({ bus, pool, logger });
const settle = serveRequests(
  bus,
  bus.names.billingSettle,
  { request: BillingSettleRequest, reply: BillingSettleReply },
  {
    handle: settleRun,
    invalidReply: { v: 1, ok: false, code: 'invalid_request' },
    failureReply: { v: 1, ok: false, code: 'service_unavailable' },
  },
  logger,
);

const usageLedger = await startUsageLedger(
  { bus, pool, logger },
  { concurrency: config.BILLING_USAGE_CONCURRENCY, ackWaitSeconds: config.BILLING_USAGE_ACK_WAIT_S },
);

const reconciler = createReconciler(
  { pool, logger, settle: settleRun },
  {
    intervalMs: config.derived.reconcileIntervalMs,
    minAgeSeconds: config.BILLING_RECONCILE_MIN_AGE_S,
    batch: 100,
  },
);

const grant = serveGrants(bus, pool, { defaultCredits: config.QUILL_DEFAULT_CREDITS }, logger);
reconciler.start();

runtime.onShutdown(async () => {
  await Promise.all([reserve.stop(), settle.stop(), grant.stop(), usageLedger.stop(), reconciler.stop()]);
});
runtime.markReady();
logger.info({ instance: config.instanceId }, 'billing ready');
