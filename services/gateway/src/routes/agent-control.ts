import { AgentSteerBody, AgentStopBody, QuillError } from '@quill/contracts';
import { getActiveRunForSession, getRunForUser, getSessionForUser, type Run } from '@quill/db';
import { pushSteer } from '@quill/redis';
import { requestStop } from '@quill/run-control';
import type { FastifyInstance } from 'fastify';
import type { GatewayDependencies } from '../app.ts';
import { requireUser } from '../auth.ts';
import { parseInput } from '../http-errors.ts';
import { modelRouteLimit } from '../rate-limit.ts';

// A run admitted but not yet taken by a router (`idle`) is live: a stop or steer waits in Redis for it.
const isLive = (phase: string) => phase === 'running' || phase === 'idle';

/** Stop and steer: any gateway replica can act on any run, through Redis and the bus. */
export function registerAgentControlRoutes(app: FastifyInstance, dependencies: GatewayDependencies): void {
  const { bus, pool, redis, keys, settings } = dependencies;

  const runningRunOf = async (
    userId: string,
    body: { run_id?: string; session_id?: string },
  ): Promise<Run> => {
    if (body.run_id) {
      const run = await getRunForUser(pool, body.run_id, userId);
      if (!run) throw new QuillError('not_found');
      if (!isLive(run.phase)) throw new QuillError('no_active_run');
      return run;
    }
    const session = await getSessionForUser(pool, body.session_id!, userId);
    if (!session) throw new QuillError('not_found');
    const run = await getActiveRunForSession(pool, session.sessionId);
    if (!run || !isLive(run.phase)) throw new QuillError('no_active_run');
    return run;
  };

  app.post('/agent/stop', async (request, reply) => {
    const user = requireUser(request);
    const run = await runningRunOf(user.id, parseInput(AgentStopBody, request.body));
    await requestStop(bus, redis, keys, run.runId, 'user_stopped', settings.stopFlagTtlMs);
    request.log.info({ run_id: run.runId }, 'stop requested');
    return reply.code(202).send({ run_id: run.runId, status: 'stopping' });
  });

  app.post('/agent/steer', modelRouteLimit, async (request, reply) => {
    const user = requireUser(request);
    const body = parseInput(AgentSteerBody, request.body);
    const run = await runningRunOf(user.id, { session_id: body.session_id });
    const queued = await pushSteer(
      redis,
      keys.steer(run.runId),
      body.message,
      settings.steerQueueMax,
      settings.stopFlagTtlMs,
    );
    if (!queued.accepted) throw new QuillError('steer_queue_full');
    return reply.code(202).send({ run_id: run.runId, queued: queued.length });
  });
}
