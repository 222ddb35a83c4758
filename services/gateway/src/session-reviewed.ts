import { requestReply } from '@quill/bus';
import { isReplicaFailure, SessionReviewedReply, SessionReviewedRequest } from '@quill/contracts';
import { getRun } from '@quill/db';
import type { FastifyBaseLogger } from 'fastify';
import type { GatewayDependencies } from './app.ts';

/**
 * The author decided on an artifact of a run: tell the router, which alone moves session phases,
 * so a session that rested `waiting_user` for acceptance alone rests `done` again once nothing
 * is left open (docs/kernel.md "Artifacts and acceptance"). The decision itself is already
 * committed, so the author's request does not wait for this (callers do not await it): if no
 * router answers, the session's next run moves it on, and this only logs. It never throws.
 */
export async function reportSessionReviewed(
  dependencies: Pick<GatewayDependencies, 'bus' | 'pool' | 'settings'>,
  runId: string | null,
  log: FastifyBaseLogger,
): Promise<void> {
  if (!runId) return;
  try {
    const run = await getRun(dependencies.pool, runId);
    if (!run) return;
    await requestReply(
      dependencies.bus,
      dependencies.bus.names.routerSessionReviewed,
      { request: SessionReviewedRequest, reply: SessionReviewedReply },
      { v: 1, session_id: run.sessionId },
      {
        timeoutMs: dependencies.settings.requestTimeoutMs,
        deadlineMs: dependencies.settings.requestDeadlineMs,
        retryReply: isReplicaFailure,
      },
    );
  } catch (error) {
    log.warn({ err: error, run_id: runId }, 'no router settled the reviewed session');
  }
}
