import { AgentStreamBody } from '@quill/contracts';
import { activeTraceId } from '@quill/telemetry';
import type { FastifyInstance } from 'fastify';
import type { GatewayDependencies } from '../app.ts';
import { requireUser } from '../auth.ts';
import type { Heartbeats } from '../heartbeats.ts';
import { parseInput } from '../http-errors.ts';
import { modelRouteLimit } from '../rate-limit.ts';
import { createRunLauncher } from '../run-launcher.ts';
import type { RunWatch } from '../run-watch.ts';
import { headersSetOn, relayRunEvents } from '../sse-relay.ts';
import type { StreamTickets } from '../stream-tickets.ts';
import { registerRunStreamRoutes } from './run-stream.ts';

export interface StreamingParts {
  watch: RunWatch;
  heartbeats: Heartbeats;
  tickets: StreamTickets;
}

export function registerAgentRoutes(
  app: FastifyInstance,
  dependencies: GatewayDependencies,
  streaming: StreamingParts,
): void {
  const launch = createRunLauncher(dependencies);
  const { wallClockMs, fallbackGraceMs } = dependencies.settings;

  app.post('/agent/stream', modelRouteLimit, async (request, reply) => {
    const user = requireUser(request);
    const body = parseInput(AgentStreamBody, request.body);
    const run = await launch(user, body, request.log, { apiKeyId: request.apiKeyId });
    request.log.info({ run_id: run.runId, session_id: run.sessionId }, 'run started');
    reply.hijack();
    await relayRunEvents(
      dependencies.bus,
      reply.raw,
      {
        runId: run.runId,
        afterSeq: 0,
        first: run.runStarted,
        heartbeats: streaming.heartbeats,
        // What hooks set on the reply (CORS) goes out too, as the relay writes the head itself.
        headers: {
          ...headersSetOn(reply),
          ...traceHeaders(),
          'x-quill-run-id': run.runId,
          'x-quill-session-id': run.sessionId,
        },
        watch: streaming.watch,
        endRequest: {
          timeoutMs: dependencies.settings.requestTimeoutMs,
          deadlineMs: dependencies.settings.requestDeadlineMs,
        },
        feeds: dependencies.runFeeds,
        fallbackAt: Date.now() + wallClockMs + fallbackGraceMs,
        runStart: { startedSeq: run.runStarted.seq, launchedAt: run.runStarted.frame.ts },
        language: body.ui_language,
      },
      request.log,
    );
  });

  registerRunStreamRoutes(app, dependencies, streaming);
}

/** The trace id, so an operator can find the run in Jaeger from what the client saw. */
export function traceHeaders(): Record<string, string> {
  const traceId = activeTraceId();
  return traceId ? { 'x-quill-trace-id': traceId } : {};
}
