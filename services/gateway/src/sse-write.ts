import type { ServerResponse } from 'node:http';

/** Responses whose head is on the socket and whose body is chunked: their events go out directly. */
const direct = new WeakSet<ServerResponse>();

/**
 * Starts a live event stream with its first event (the `retry:` line): writes the head now
 * (`flushHeaders`), so that everything after it can go to the socket in order
 * (docs/decisions/0063-sse-events-in-one-socket-write.md). The socket is corked around the two,
 * so head and first event still leave in one system call. Every later write to the stream must
 * go through `writeSseEvent`, and the stream ends with `response.end`.
 */
export function startSseResponse(
  response: ServerResponse,
  headers: Record<string, string | string[]>,
  firstEvent: string,
): void {
  const socket = response.socket;
  socket?.cork();
  try {
    response.writeHead(200, headers);
    response.flushHeaders();
    // A pipelined response waiting for its socket keeps Node's buffering all along.
    if (response.chunkedEncoding && socket !== null) direct.add(response);
    writeSseEvent(response, firstEvent);
  } finally {
    // Also when the head is refused (an invalid header value): the error answer must not stay corked.
    socket?.uncork();
  }
}

/**
 * Writes one SSE event (or comment) as a single socket write: the chunk's size line, the text
 * and the chunk's end in one string. `response.write` sends the same bytes, but holds them in the
 * response until the next tick and writes them as several buffers; a gateway pays that for every
 * frame of every stream. Because `response.write` holds its bytes back, a stream must not mix the
 * two: `startSseResponse` puts the head on the socket first, and every write after it comes here.
 * Streams whose body is not chunked (an HTTP/1.0 client) and a response that is no longer
 * writable go through `response.write`, as before. Returns false when the socket's buffer is
 * full: wait for `drained` before writing more.
 */
export function writeSseEvent(response: ServerResponse, text: string): boolean {
  const socket = response.socket;
  if (!direct.has(response) || response.writableEnded || socket === null || socket.destroyed) {
    return response.write(text);
  }
  return socket.write(`${Buffer.byteLength(text).toString(16)}\r\n${text}\r\n`);
}

/**
 * Resolves once a write that returned false has drained (the response's socket emptied its
 * buffer) or the response closed. The socket's `drain` covers both kinds of write: a response
 * emits its own `drain` from the socket's.
 */
export function drained(response: ServerResponse): Promise<void> {
  const emitter = response.socket ?? response;
  return new Promise((resolve) => {
    const done = () => {
      emitter.off('drain', done);
      response.off('close', done);
      resolve();
    };
    emitter.once('drain', done);
    response.once('close', done);
  });
}
