import { requestReply } from '@quill/bus';
import { isReplicaFailure, SessionReviewedReply, SessionReviewedRequest } from '@quill/contracts';
import { getRun } from '@quill/db';
import type { FastifyBaseLogger } from 'fastify';
import type { GatewayDependencies } from './app.ts';

/**
 * The author decided on an artifact of a run: tell the router, which alone moves session phases,
 * so a session that rested `waiting_user` for acceptance alone rests `done` again once nothing
 * is left open (docs/kernel.md "Artifacts and acceptance"). The decision itself is already
 * committed; if no router answers, the session's next run moves it on, so this only logs.
 */
export async function reportSessionReviewed(
  dependencies: Pick<GatewayDependencies, 'bus' | 'pool' | 'settings'>,
  runId: string | null,
  log: FastifyBaseLogger,
): Promise<void> {
  if (!runId) return;
  const run = await getRun(dependencies.pool, runId);
  if (!run) return;
  try {
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
    log.warn({ err: error, session_id: run.sessionId }, 'no router settled the reviewed session');
  }
}
