import { type Bus, serveRequests } from '@quill/bus';
import {
  type RunEndReply,
  RunEndReply as RunEndReplySchema,
  RunEndRequest,
  type RunOpenReply,
  RunOpenReply as RunOpenReplySchema,
  RunOpenRequest,
  type SessionReviewedReply,
  SessionReviewedReply as SessionReviewedReplySchema,
  SessionReviewedRequest,
} from '@quill/contracts';
import { getRun } from '@quill/db';
import { createRun, discardIdleRun } from '@quill/db/router';
import type { Pool } from 'pg';
import type { Logger } from 'pino';
import type { PhaseWriter } from './phase-writer.ts';

/**
 * The gateway's questions about the run rows the router owns (docs/architecture.md "What each
 * service owns"), answered in a queue group like billing's: open a run (`idle`, asked while
 * billing reserves, so the launch costs no extra round trip) and end one the gateway gave up on
 * (its launch failed, or its last resort sent the terminal frame), and settle a session whose
 * author decided on its pending AI output. All are idempotent, so the
 * gateway asks again when a replica failed.
 */
export function serveRunAdmission(dependencies: {
  bus: Bus;
  pool: Pool;
  logger: Logger;
  phases: PhaseWriter;
}) {
  const { bus, pool, logger, phases } = dependencies;
  const open = serveRequests(
    bus,
    bus.names.routerRunOpen,
    { request: RunOpenRequest, reply: RunOpenReplySchema },
    {
      async handle(request): Promise<RunOpenReply> {
        const run = await createRun(pool, {
          runId: request.run_id,
          sessionId: request.session_id,
          projectId: request.project_id,
          userId: request.user_id,
          generationMode: request.generation_mode,
          apiKeyId: request.api_key_id,
        });
        return { v: 1, ok: true, phase: run.phase };
      },
      invalidReply: { v: 1, ok: false, code: 'invalid_request' },
      failureReply: { v: 1, ok: false, code: 'service_unavailable' },
    },
    logger,
  );
  const end = serveRequests(
    bus,
    bus.names.routerRunEnd,
    { request: RunEndRequest, reply: RunEndReplySchema },
    {
      async handle(request): Promise<RunEndReply> {
        // An admission that was never granted a credit leaves nothing behind (README "Billing").
        if (
          request.reason === 'launch_failed' &&
          !request.reserved &&
          (await discardIdleRun(pool, request.run_id))
        )
          return { v: 1, ok: true, result: 'discarded' };
        const run = await getRun(pool, request.run_id);
        if (!run) return { v: 1, ok: true, result: 'missing' };
        const write = await phases.endRun(run, {
          phase: 'error',
          stopReason: request.reason === 'launch_failed' ? 'launch_failed' : 'error',
          errorCode: request.reason === 'launch_failed' ? 'service_unavailable' : 'worker_lost',
        });
        logger.info(
          { run_id: request.run_id, reason: request.reason, result: write.kind },
          'run ended for the gateway',
        );
        return { v: 1, ok: true, result: write.kind };
      },
      invalidReply: { v: 1, ok: false, code: 'invalid_request' },
      failureReply: { v: 1, ok: false, code: 'service_unavailable' },
    },
    logger,
  );
  // The author decided on an artifact: a session that waited for acceptance alone rests `done`.
  const reviewed = serveRequests(
    bus,
    bus.names.routerSessionReviewed,
    { request: SessionReviewedRequest, reply: SessionReviewedReplySchema },
    {
      async handle(request): Promise<SessionReviewedReply> {
        const write = await phases.sessionReviewed(request.session_id);
        return { v: 1, ok: true, result: write.kind };
      },
      invalidReply: { v: 1, ok: false, code: 'invalid_request' },
      failureReply: { v: 1, ok: false, code: 'service_unavailable' },
    },
    logger,
  );
  return {
    async stop() {
      await Promise.all([open.stop(), end.stop(), reviewed.stop()]);
    },
  };
}
