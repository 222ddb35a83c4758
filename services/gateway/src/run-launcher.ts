import { randomUUID } from 'node:crypto';
import { type Bus, BusRequestError, publishEnvelope, publishFrame, requestReply } from '@quill/bus';
import {
  type AgentStreamBody,
  BillingReserveReply,
  BillingReserveRequest,
  BillingSettleReply,
  BillingSettleRequest,
  type ErrorCode,
  frame,
  isoNow,
  isReplicaFailure,
  msgIds,
  QuillError,
  RunEndReply,
  RunEndRequest,
  RunOpenReply,
  RunOpenRequest,
  RunStartEnvelope,
  type SseFrame,
} from '@quill/contracts';
import type { User } from '@quill/db';
import { openLaunchSession, recordRunLaunch } from '@quill/db/gateway';
import { acquireRunSlots, type RedisClient, type RedisKeys, releaseRunSlots } from '@quill/redis';
import { quillMetrics } from '@quill/telemetry';
import type { FastifyBaseLogger as Logger } from 'fastify';
import type { Pool } from 'pg';

export interface LauncherDependencies {
  bus: Bus;
  pool: Pool;
  redis: RedisClient;
  keys: RedisKeys;
  settings: {
    sessionLockTtlMs: number;
    requestTimeoutMs: number;
    requestDeadlineMs: number;
    userMaxConcurrentRuns: number;
  };
}

export interface LaunchedRun {
  runId: string;
  sessionId: string;
  /** The run's first frame as it was stored: the launch's own stream starts from it. */
  runStarted: { seq: number; frame: SseFrame };
}

/**
 * Everything between a valid `/agent/stream` request and a published `runs.start`: access,
 * the one-run-per-session lock, the credit reservation, the run row and the first frame. Any
 * failure after the lock undoes what was done, so a refused request leaves no half-started run
 * and no credit taken. The run row is the router's (`router.runs.open`, asked while billing
 * reserves, so the launch waits for the slower of the two, not both; docs/decisions/0010).
 */
export function createRunLauncher(dependencies: LauncherDependencies) {
  const { bus, pool, redis, keys } = dependencies;
  // Reserve and settle are idempotent per run, so a replica that died or failed is asked again.
  const requestOptions = {
    timeoutMs: dependencies.settings.requestTimeoutMs,
    deadlineMs: dependencies.settings.requestDeadlineMs,
    retryReply: isReplicaFailure,
  };

  return async function launch(
    user: User,
    body: AgentStreamBody,
    logger: Logger,
    credential: { apiKeyId?: string | undefined } = {},
  ): Promise<LaunchedRun> {
    // Access and the session (the caller's, or a new one) in one round trip.
    const { memberRole, session } = await openLaunchSession(pool, {
      projectId: body.project_id,
      userId: user.id,
      sessionId: body.session_id,
      title: body.message.slice(0, 40),
    });
    if (!memberRole) throw new QuillError('not_found');
    if (memberRole === 'viewer') throw new QuillError('forbidden');
    if (!session || session.projectId !== body.project_id) throw new QuillError('not_found');

    const runId = randomUUID();
    const lockKey = keys.sessionLock(session.sessionId);
    const semaphoreKey = keys.userSemaphore(user.id);
    const { sessionLockTtlMs, userMaxConcurrentRuns } = dependencies.settings;
    // The lock and the slot in one script: both taken, or neither (session_busy first).
    const slots = await acquireRunSlots(
      redis,
      { sessionLock: lockKey, userSemaphore: semaphoreKey },
      runId,
      userMaxConcurrentRuns,
      sessionLockTtlMs,
    );
    if (slots !== 'ok') throw new QuillError(slots);
    let reserved = false;
    let opened = false;
    // Billing and the router are asked together; the launch's writes go once both said yes, as
    // one statement, so a refused request leaves no message and no credit taken (and the router
    // drops the run it opened) without a transaction held open across the two requests
    // (docs/decisions/0069-launch-writes-after-the-answers.md).
    const reservation = settle(
      requestReply(
        bus,
        bus.names.billingReserve,
        { request: BillingReserveRequest, reply: BillingReserveReply },
        { v: 1, run_id: runId, user_id: user.id },
        requestOptions,
      ),
    );
    const admission = settle(
      requestReply(
        bus,
        bus.names.routerRunOpen,
        { request: RunOpenRequest, reply: RunOpenReply },
        {
          v: 1,
          run_id: runId,
          session_id: session.sessionId,
          project_id: body.project_id,
          user_id: user.id,
          generation_mode: body.generation_mode,
          api_key_id: credential.apiKeyId ?? null,
        },
        requestOptions,
      ),
    );
    try {
      const [answer, admitted] = await Promise.all([reservation, admission]);
      opened = admitted.ok && admitted.value.ok;
      reserved = answer.ok && answer.value.ok;
      if (!answer.ok) throw answer.error;
      if (!answer.value.ok) throw new QuillError(reservationRefusal(answer.value.code));
      if (!admitted.ok) throw admitted.error;
      if (!admitted.value.ok) throw new QuillError('service_unavailable');
      // The start snapshot, the message, the pins: one statement, atomic on its own.
      const message = await recordRunLaunch(pool, {
        projectId: body.project_id,
        sessionId: session.sessionId,
        runId,
        userId: user.id,
        message: body.message,
      });
      // One connection keeps its publishes in order, so run_started is still the run's first frame.
      const started = frame('run_started', runId, {
        session_id: session.sessionId,
        project_id: body.project_id,
        generation_mode: body.generation_mode,
      });
      const [stored] = await Promise.all([
        publishFrame(bus, started, { msgId: msgIds.runStarted(runId) }),
        publishEnvelope(
          bus,
          bus.names.runStart(runId),
          RunStartEnvelope,
          {
            v: 1,
            run_id: runId,
            session_id: session.sessionId,
            project_id: body.project_id,
            user_id: user.id,
            message_id: message.messageId,
            message: body.message,
            focus_file_id: body.focus_file_id ?? null,
            attached_file_ids: body.attached_file_ids,
            generation_mode: body.generation_mode,
            ui_language: body.ui_language,
            created_at: isoNow(),
          },
          { msgId: msgIds.runStart(runId) },
        ),
      ]);
      quillMetrics().runsStarted.add(1, { generation_mode: body.generation_mode });
      return { runId, sessionId: session.sessionId, runStarted: { seq: stored.seq, frame: started } };
    } catch (error) {
      await undo(runId, user.id, { reserved, opened }, logger);
      await releaseRunSlots(redis, { sessionLock: lockKey, userSemaphore: semaphoreKey }, runId);
      if (error instanceof QuillError) throw error;
      if (error instanceof BusRequestError) throw new QuillError('service_unavailable', { cause: error });
      throw new QuillError('internal_error', { cause: error });
    }
  };

  async function undo(
    runId: string,
    userId: string,
    done: { reserved: boolean; opened: boolean },
    logger: Logger,
  ) {
    try {
      // The router ends the row it opened: removed when no credit was taken, `error` otherwise
      // (the reservation's refund below needs a run to settle).
      if (done.opened) {
        await requestReply(
          bus,
          bus.names.routerRunEnd,
          { request: RunEndRequest, reply: RunEndReply },
          { v: 1, run_id: runId, reason: 'launch_failed', reserved: done.reserved },
          requestOptions,
        );
      }
      if (done.reserved) {
        await requestReply(
          bus,
          bus.names.billingSettle,
          { request: BillingSettleRequest, reply: BillingSettleReply },
          { v: 1, run_id: runId, user_id: userId, outcome: { terminal: 'error', reason: 'launch_failed' } },
          requestOptions,
        );
      }
    } catch (error) {
      logger.error({ err: error, run_id: runId }, 'could not undo a failed launch');
    }
  }
}

type Settled<T> = { ok: true; value: T } | { ok: false; error: unknown };

/** A promise that never rejects, so it can be awaited later without an unhandled rejection meanwhile. */
function settle<T>(promise: Promise<T>): Promise<Settled<T>> {
  return promise.then(
    (value) => ({ ok: true, value }),
    (error: unknown) => ({ ok: false, error }),
  );
}

/**
 * Billing's refusal as the author sees it: 402 for an empty balance or a reached daily cap;
 * anything else billing answered (it failed, or could not read the request) is its outage.
 */
function reservationRefusal(code: ErrorCode): ErrorCode {
  return code === 'quota_exhausted' || code === 'cost_cap_reached' ? code : 'service_unavailable';
}
