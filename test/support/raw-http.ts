import { connect, type Socket } from 'node:net';

interface RawAnswer {
  status: number;
  body: string;
  /** The socket's first error (`EPIPE` or `ECONNRESET`: the server closed while we still sent). */
  socketError: string | undefined;
}

/**
 * One connection to the server: `send` writes the request (the head gets `host` and
 * `connection: close` appended), and the answer is read until the server closes. Resolves with
 * the status line's code, the body and the first socket error, whatever came first.
 */
function exchange(
  baseUrl: string,
  send: (socket: Socket, headEnd: string) => void,
): Promise<RawAnswer & { received: string }> {
  const { hostname, port } = new URL(baseUrl);
  return new Promise((resolve) => {
    const socket = connect(Number(port), hostname);
    let received = '';
    let socketError: string | undefined;
    let finished = false;
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      received += chunk;
    });
    const finish = () => {
      if (finished) return;
      finished = true;
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(received)?.[1] ?? 0);
      const split = received.indexOf('\r\n\r\n');
      resolve({ status, body: split < 0 ? '' : received.slice(split + 4), socketError, received });
    };
    socket.on('error', (error: NodeJS.ErrnoException) => {
      socketError ??= error.code ?? error.message;
      finish();
    });
    // Not at `end`: a write the server refused after closing comes as an error before `close`.
    socket.on('close', finish);
    send(socket, `\r\nhost: ${hostname}:${port}\r\nconnection: close\r\n`);
  });
}

/**
 * Sends one request exactly as written (a URL `fetch` would normalise, a method it refuses, a
 * header block Node's parser rejects) and returns the status line's code and the body. A socket
 * error before any answer rejects.
 */
export async function rawRequest(
  baseUrl: string,
  head: string,
  body = '',
): Promise<{ status: number; body: string }> {
  const answer = await exchange(baseUrl, (socket, headEnd) => socket.write(`${head}${headEnd}\r\n${body}`));
  if (!answer.received && answer.socketError) throw new Error(`raw request failed: ${answer.socketError}`);
  return { status: answer.status, body: answer.body };
}

/**
 * Sends a request whose body goes out in `chunkBytes` pieces, each `pauseMs` after the previous
 * one was written, as a client uploading over a slower link does (on loopback a body written at
 * once is in the kernel's buffers before the server answers); reads the answer to the end.
 * `sentBytes` is how much of the body was written before the connection ended: less than
 * `bodyBytes` when the server answered and closed while the body was still going out (whether
 * the client then meets a reset or only the close depends on timing).
 */
export async function slowUpload(
  baseUrl: string,
  head: string,
  bodyBytes: number,
  { chunkBytes = 64 * 1024, pauseMs = 10 } = {},
): Promise<RawAnswer & { sentBytes: number }> {
  let sentBytes = 0;
  const { status, body, socketError } = await exchange(baseUrl, (socket, headEnd) => {
    const write = (data: string | Buffer) =>
      new Promise<boolean>((done) => socket.write(data, (error) => done(!error)));
    void (async () => {
      if (!(await write(`${head}${headEnd}content-length: ${bodyBytes}\r\n\r\n`))) return;
      const chunk = Buffer.alloc(chunkBytes, 0x61);
      for (let sent = 0; sent < bodyBytes; sent += chunkBytes) {
        const piece = sent + chunkBytes <= bodyBytes ? chunk : chunk.subarray(0, bodyBytes - sent);
        if (!(await write(piece))) return;
        sentBytes += piece.length;
        await new Promise((next) => setTimeout(next, pauseMs));
      }
    })();
  });
  return { status, body, socketError, sentBytes };
}
