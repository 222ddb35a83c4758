import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import { ERROR_CATALOG, type ErrorCode, errorBody } from '@quill/contracts';
import type { FastifyReply, FastifyServerOptions } from 'fastify';
import { catalogCodeFor, sendError } from './http-errors.ts';

/**
 * Errors Fastify and Node raise before a route runs, in the one documented error body instead
 * of their own (which quotes the URL): a bad percent-encoding (400), an over-long path segment
 * (414), and what the HTTP parser refuses (431 headers, 400 otherwise).
 */
export function frameworkErrorOptions(): Pick<
  FastifyServerOptions,
  'frameworkErrors' | 'clientErrorHandler'
> {
  return {
    frameworkErrors(error, request, reply) {
      const code = catalogCodeFor(error) ?? 'invalid_request';
      request.log.info({ code: error.code }, 'request refused by the framework');
      // The same reply object; its type here is generic over the raw server, the route's is not.
      return sendError(reply as unknown as FastifyReply, code);
    },
    clientErrorHandler(error: NodeJS.ErrnoException, socket: Socket) {
      if (error.code === 'ECONNRESET' || socket.destroyed) return;
      const code: ErrorCode = error.code === 'HPE_HEADER_OVERFLOW' ? 'headers_too_large' : 'invalid_request';
      const body = JSON.stringify(errorBody(code));
      const status = ERROR_CATALOG[code].http;
      if (socket.writable) {
        socket.write(
          `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nconnection: close\r\ncontent-type: application/json; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
        );
      }
      socket.destroy(error);
    },
  };
}
