import { z } from 'zod';
import { SseFrame } from './frames.ts';
import { UiLanguage } from './roles.ts';

/**
 * Stream tickets: a browser's native EventSource cannot send an Authorization header, so it
 * presents a short-lived, single-use ticket for one run in the query instead (README "HTTP API").
 * Tickets are 32 random bytes, base64url.
 */
export const STREAM_TICKET_TTL_S = 60;
export const StreamTicket = z.string().regex(/^[A-Za-z0-9_-]{43}$/, 'not a stream ticket');

export const StreamTicketResponse = z.object({
  ticket: StreamTicket,
  expires_in: z.number().int().positive(),
  /** The resume URL with the ticket, relative to the API base. */
  stream_url: z.string(),
});
export type StreamTicketResponse = z.infer<typeof StreamTicketResponse>;

/**
 * `GET /agent/runs/:runId/stream` query: the ticket, and where to resume when a new EventSource
 * (which cannot set Last-Event-ID itself) reconnects with a fresh ticket.
 */
export const StreamQuery = z.strictObject({
  ticket: StreamTicket.optional(),
  last_event_id: z.coerce.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER).optional(),
  // The language error messages on this stream are shown in (docs/protocol.md); codes never change.
  ui_language: UiLanguage.optional(),
});
export type StreamQuery = z.infer<typeof StreamQuery>;

/** The `retry:` an SSE response starts with: how long a browser waits before reconnecting. */
export const SSE_RETRY_MS = 2000;

/** `GET /agent/runs/:runId/events`: the run's frames after `after` (an SSE id), however old the run. */
export const RunEventsQuery = z.strictObject({
  after: z.coerce.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER).optional(),
});
export type RunEventsQuery = z.infer<typeof RunEventsQuery>;

export const RunEventsResponse = z.object({
  run_id: z.string(),
  /** `stream`: read from EVENTS; `archive`: the run archive (the stream no longer holds it). */
  source: z.enum(['stream', 'archive']),
  events: z.array(z.object({ id: z.number().int(), frame: SseFrame })),
});
export type RunEventsResponse = z.infer<typeof RunEventsResponse>;
