import { AgentStreamBody, LastEventId, QuillError, RunIdParams } from '@quill/contracts';
import { getRunForUser } from '@quill/db';
import { activeTraceId } from '@quill/telemetry';
import type { FastifyInstance } from 'fastify';
import type { GatewayDependencies } from '../app.ts';
import { requireUser } from '../auth.ts';
import type { Heartbeats } from '../heartbeats.ts';
import { parseInput } from '../http-errors.ts';
import { modelRouteLimit } from '../rate-limit.ts';
import { createRunLauncher } from '../run-launcher.ts';
import type { RunWatch } from '../run-watch.ts';
import { relayRunEvents } from '../sse-relay.ts';

export function registerAgentRoutes(
  app: FastifyInstance,
  dependencies: GatewayDependencies,
  watch: RunWatch,
  heartbeats: Heartbeats,
): void {
  const launch = createRunLauncher(dependencies);
  const { wallClockMs, fallbackGraceMs } = dependencies.settings;

  app.post('/agent/stream', modelRouteLimit, async (request, reply) => {
    const user = requireUser(request);
    const body = parseInput(AgentStreamBody, request.body);
    const run = await launch(user, body, request.log);
    request.log.info({ run_id: run.runId, session_id: run.sessionId }, 'run started');
    reply.hijack();
    await relayRunEvents(
      dependencies.bus,
      reply.raw,
      {
        runId: run.runId,
        afterSeq: 0,
        heartbeats,
        headers: { ...traceHeaders(), 'x-quill-run-id': run.runId, 'x-quill-session-id': run.sessionId },
        watch,
        pool: dependencies.pool,
        fallbackAt: Date.now() + wallClockMs + fallbackGraceMs,
      },
      request.log,
    );
  });

  app.get('/agent/runs/:runId/stream', async (request, reply) => {
    const user = requireUser(request);
    const { runId } = parseInput(RunIdParams, request.params);
    // session_id is the only thread id; a run is reachable only by the user it belongs to.
    const run = await getRunForUser(dependencies.pool, runId, user.id);
    if (!run) throw new QuillError('not_found');
    const lastEventId = request.headers['last-event-id'];
    const afterSeq = lastEventId === undefined ? 0 : parseInput(LastEventId, lastEventId);
    reply.hijack();
    await relayRunEvents(
      dependencies.bus,
      reply.raw,
      {
        runId,
        afterSeq,
        heartbeats,
        headers: traceHeaders(),
        watch,
        pool: dependencies.pool,
        ...(run.phase === 'running'
          ? { fallbackAt: Date.parse(run.createdAt) + wallClockMs + fallbackGraceMs }
          : {}),
      },
      request.log,
    );
  });
}

/** The trace id, so an operator can find the run in Jaeger from what the client saw. */
function traceHeaders(): Record<string, string> {
  const traceId = activeTraceId();
  return traceId ? { 'x-quill-trace-id': traceId } : {};
}
