import cors from '@fastify/cors';
import type { FastifyInstance } from 'fastify';

/** Response headers a browser script may read cross-origin (the SSE and rate-limit ones). */
export const EXPOSED_HEADERS = [
  'x-quill-run-id',
  'x-quill-session-id',
  'x-quill-trace-id',
  'x-quill-protocol',
  'retry-after',
  'allow',
];

/**
 * CORS for the browser clients on the origins of GATEWAY_CORS_ORIGINS (README "Configuration");
 * any other origin gets no `access-control-*` header, so its scripts cannot read a response.
 * Auth is a bearer header or a stream ticket, never a cookie, so credentials stay off.
 */
export async function installCors(app: FastifyInstance, origins: readonly string[]): Promise<void> {
  await app.register(cors, {
    origin: [...origins],
    methods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'],
    allowedHeaders: ['authorization', 'content-type', 'last-event-id', 'x-request-id'],
    exposedHeaders: EXPOSED_HEADERS,
    credentials: false,
    maxAge: 600,
    // A bare OPTIONS (no preflight headers) is answered 204 rather than with the plugin's own
    // plain-text 400, which is not the documented error body.
    strictPreflight: false,
  });
}
