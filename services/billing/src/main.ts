import { serveRequests } from '@quill/bus';
import type {
  BillingReserveReply as ReserveReply,
  BillingSettleReply as SettleReply,
} from '@quill/contracts';
import {
  BillingReserveReply,
  BillingReserveRequest,
  BillingSettleReply,
  BillingSettleRequest,
} from '@quill/contracts';
import { startService } from '@quill/service-kit';
import { decide } from './decision.ts';
import { reserveCredit, settleRun } from './ledger.ts';

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

const settle = serveRequests(
  bus,
  bus.names.billingSettle,
  { request: BillingSettleRequest, reply: BillingSettleReply },
  {
    async handle(request): Promise<SettleReply> {
      const { decision, reason } = decide(request.outcome);
      const settlement = await settleRun(pool, {
        runId: request.run_id,
        userId: request.user_id,
        decision,
        reason,
      });
      logger.info(
        {
          run_id: request.run_id,
          billing_reason: settlement.reason,
          decision: settlement.decision,
          duplicate: settlement.duplicate,
        },
        'Agent stream billing evaluated',
      );
      return {
        v: 1,
        ok: true,
        decision: settlement.decision,
        reason: settlement.reason,
        credits_refunded: settlement.creditsRefunded,
        duplicate: settlement.duplicate,
      };
    },
    invalidReply: { v: 1, ok: false, code: 'invalid_request' },
    failureReply: { v: 1, ok: false, code: 'service_unavailable' },
  },
  logger,
);

runtime.onShutdown(async () => {
  await Promise.all([reserve.stop(), settle.stop()]);
});
logger.info({ instance: config.instanceId }, 'billing ready');
