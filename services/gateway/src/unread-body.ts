import type { IncomingMessage } from 'node:http';
import type { FastifyInstance } from 'fastify';

/** How much of a refused request's unread body the gateway reads and drops before it answers. */
export interface UnreadBodyLimits {
  maxBytes: number;
  maxMs: number;
}

/**
 * A refused request may still be sending its body: a 413 decided from `content-length`, a 415 or
 * a 429 refuse before reading it (an answer after the route's parsing finds it all read). Node
 * then closes the connection right after the answer (Fastify marks it `connection: close`), and
 * the client's next write of the body meets a reset. Whether the client sees the answer or only
 * `EPIPE` / `ECONNRESET` is then a race (a browser shows a network error instead of the 413). So
 * before an error answer goes out, the rest of the body is read and dropped, up to `maxBytes` and
 * `maxMs` (what a web server's lingering close does); past either, the answer goes anyway and a
 * client still sending meets the reset.
 */
export function installUnreadBodyDrain(app: FastifyInstance, limits: UnreadBodyLimits): void {
  // A callback hook: every other answer goes on in the same turn, with no promise made for it.
  app.addHook('onSend', (request, reply, payload, done) => {
    if (reply.statusCode < 400 || request.raw.complete) return done(null, payload);
    void dropUnreadBody(request.raw, limits).then(() => done(null, payload));
  });
}

/** Resolves once the request's body has all arrived and been dropped, or a limit is reached. */
export function dropUnreadBody(request: IncomingMessage, limits: UnreadBodyLimits): Promise<void> {
  // `complete`: the parser has every byte of the message; what is left is in memory, not on the wire.
  if (request.complete || request.destroyed) return Promise.resolve();
  return new Promise<void>((resolve) => {
    let received = 0;
    const finish = () => {
      clearTimeout(timer);
      request.off('data', onData);
      request.off('end', finish);
      request.off('error', finish);
      request.off('close', finish);
      resolve();
    };
    const onData = (chunk: Buffer) => {
      received += chunk.length;
      if (received > limits.maxBytes) finish();
    };
    const timer = setTimeout(finish, limits.maxMs);
    request.on('data', onData);
    request.once('end', finish);
    request.once('error', finish);
    request.once('close', finish);
  });
}
