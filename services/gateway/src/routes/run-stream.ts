import {
  type Bus,
  decodeEnvelope,
  InvalidEnvelopeError,
  lastSequence,
  lastStored,
  runStartSeq,
} from '@quill/bus';
import {
  EventEnvelope,
  LastEventIdHeaders,
  QuillError,
  RunEventsQuery,
  type RunEventsResponse,
  RunIdParams,
  StreamQuery,
} from '@quill/contracts';
import { getArchivedFrames, getRunForUser } from '@quill/db';
import type { FastifyInstance } from 'fastify';
import type { GatewayDependencies } from '../app.ts';
import { requireUser } from '../auth.ts';
import { parseInput } from '../http-errors.ts';
import { requestLanguage } from '../request-language.ts';
import { readRunHistory, writeArchivedStream } from '../run-history.ts';
import { headersSetOn, relayRunEvents } from '../sse-relay.ts';
import type { StreamingParts } from './agent.ts';
import { traceHeaders } from './agent.ts';

/**
 * Resuming a run's stream, and the ticket a browser's native EventSource resumes with (README
 * "Browser streaming").
 */
export function registerRunStreamRoutes(
  app: FastifyInstance,
  dependencies: GatewayDependencies,
  streaming: StreamingParts,
): void {
  const { bus, pool } = dependencies;
  const { wallClockMs, fallbackGraceMs } = dependencies.settings;

  app.post('/agent/runs/:runId/stream-ticket', async (request, reply) => {
    const user = requireUser(request);
    const { runId } = parseInput(RunIdParams, request.params);
    const run = await getRunForUser(pool, runId, user.id);
    if (!run) throw new QuillError('not_found');
    const { ticket, expiresIn } = await streaming.tickets.mint(user.id, runId);
    return reply.code(201).send({
      ticket,
      expires_in: expiresIn,
      stream_url: `/api/v1/agent/runs/${runId}/stream?ticket=${ticket}`,
    });
  });

  app.get('/agent/runs/:runId/events', async (request): Promise<RunEventsResponse> => {
    const user = requireUser(request);
    const { runId } = parseInput(RunIdParams, request.params);
    const query = parseInput(RunEventsQuery, request.query);
    const run = await getRunForUser(pool, runId, user.id);
    if (!run) throw new QuillError('not_found');
    const history = await readRunHistory(bus, pool, runId, query.after ?? 0, run.createdAt);
    return { run_id: runId, ...history };
  });

  app.get('/agent/runs/:runId/stream', { config: { streamTicket: true } }, async (request, reply) => {
    const user = requireUser(request);
    const { runId } = parseInput(RunIdParams, request.params);
    const query = parseInput(StreamQuery, request.query);
    // session_id is the only thread id; a run is reachable only by the user it belongs to.
    const run = await getRunForUser(pool, runId, user.id);
    if (!run) throw new QuillError('not_found');
    // The header (an EventSource's own reconnect) wins; the query serves a new EventSource,
    // which cannot set the header.
    const headers = parseInput(LastEventIdHeaders, { 'last-event-id': request.headers['last-event-id'] });
    const afterSeq = headers['last-event-id'] ?? query.last_event_id ?? 0;
    // An ended run the router archived replays from the archive: its stream may have expired.
    const archived =
      run.phase === 'idle' || run.phase === 'running' ? null : await getArchivedFrames(pool, runId);
    if (archived) {
      const done = archived.find((item) => item.frame.type === 'done');
      if (done && afterSeq >= done.seq) return reply.code(204).send();
      reply.hijack();
      writeArchivedStream(reply.raw, archived, afterSeq, { ...headersSetOn(reply), ...traceHeaders() });
      return;
    }
    if (afterSeq > 0) {
      const point = await resumePoint(bus, runId, afterSeq);
      // Nothing follows `done`: 204 tells an EventSource to stop reconnecting (HTML §9.2), where
      // an open stream would only heartbeat forever.
      if (point === 'ended') return reply.code(204).send();
      // No client can have seen a sequence the stream never assigned; waiting for one would
      // skip the run's remaining frames, `done` included.
      if (point === 'ahead') {
        throw new QuillError('invalid_request', {
          details: { fields: { 'last-event-id': ['is after the newest stored frame'] } },
        });
      }
    }
    // A stream from the run's beginning reads from its first frame, not the stream's first message
    // (docs/decisions/0076); its stored frames are a replay, as a resume's are.
    const readAfter = afterSeq > 0 ? afterSeq : await runStartSeq(bus, runId, run.createdAt);
    const unfinished = run.phase === 'running' || run.phase === 'idle';
    reply.hijack();
    await relayRunEvents(
      bus,
      reply.raw,
      {
        runId,
        afterSeq: readAfter,
        heartbeats: streaming.heartbeats,
        headers: { ...headersSetOn(reply), ...traceHeaders() },
        watch: streaming.watch,
        endRequest: {
          timeoutMs: dependencies.settings.requestTimeoutMs,
          deadlineMs: dependencies.settings.requestDeadlineMs,
        },
        feeds: dependencies.runFeeds,
        language: requestLanguage(request),
        // Only a run not ended yet gets the gateway's last resort. Named keys, not a spread:
        // the type check then refuses one the relay does not have.
        fallbackAt: unfinished ? Date.parse(run.createdAt) + wallClockMs + fallbackGraceMs : undefined,
        runStart: unfinished ? { launchedAt: run.createdAt } : undefined,
      },
      request.log,
    );
  });
}

/**
 * Where a resume after `seq` stands: the run ended with `done` at or before it, `seq` is past
 * anything the stream has stored, or there is more to stream.
 */
async function resumePoint(bus: Bus, runId: string, seq: number): Promise<'ended' | 'ahead' | 'stream'> {
  const subject = bus.names.events(runId);
  const last = await lastStored(bus, { stream: bus.names.streams.events, subject });
  if (last && last.seq <= seq && isDone(subject, last.data)) return 'ended';
  if (last && last.seq >= seq) return 'stream';
  return seq > (await lastSequence(bus, bus.names.streams.events)) ? 'ahead' : 'stream';
}

function isDone(subject: string, data: Uint8Array): boolean {
  try {
    return decodeEnvelope(EventEnvelope, subject, data).frame.type === 'done';
  } catch (error) {
    if (error instanceof InvalidEnvelopeError) return false;
    throw error;
  }
}
