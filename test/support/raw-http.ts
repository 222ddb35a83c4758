import { connect } from 'node:net';

/**
 * Sends one request exactly as written (a URL `fetch` would normalise, a method it refuses, a
 * header block Node's parser rejects) and returns the status line's code and the body.
 */
export function rawRequest(
  baseUrl: string,
  head: string,
  body = '',
): Promise<{ status: number; body: string }> {
  const { hostname, port } = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    let received = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      received += chunk;
    });
    socket.on('error', (error) => (received ? finish() : reject(error)));
    socket.on('end', () => finish());
    socket.on('close', () => finish());
    let finished = false;
    const finish = () => {
      if (finished) return;
      finished = true;
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(received)?.[1] ?? 0);
      const split = received.indexOf('\r\n\r\n');
      resolve({ status, body: split < 0 ? '' : received.slice(split + 4) });
    };
    socket.write(`${head}\r\nhost: ${hostname}:${port}\r\nconnection: close\r\n\r\n${body}`);
  });
}

/**
 * Sends a request whose body goes out in `chunkBytes` pieces, each `pauseMs` after the previous
 * one was written, as a client uploading over a slower link does (on loopback a body written at
 * once is in the kernel's buffers before the server answers); reads the answer to the end.
 * `socketError` is the socket's first error (`EPIPE` or `ECONNRESET`: the server closed while the
 * body was still going out).
 */
export function slowUpload(
  baseUrl: string,
  head: string,
  bodyBytes: number,
  { chunkBytes = 64 * 1024, pauseMs = 10 } = {},
): Promise<{ status: number; body: string; socketError: string | undefined }> {
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
      resolve({ status, body: split < 0 ? '' : received.slice(split + 4), socketError });
    };
    socket.on('error', (error: NodeJS.ErrnoException) => {
      socketError ??= error.code ?? error.message;
      finish();
    });
    socket.on('close', finish);
    const write = (data: string | Buffer) =>
      new Promise<boolean>((done) => socket.write(data, (error) => done(!error)));
    void (async () => {
      const headWritten = await write(
        `${head}\r\nhost: ${hostname}:${port}\r\ncontent-length: ${bodyBytes}\r\nconnection: close\r\n\r\n`,
      );
      if (!headWritten) return;
      const chunk = Buffer.alloc(chunkBytes, 0x61);
      for (let sent = 0; sent < bodyBytes; sent += chunkBytes) {
        const piece = sent + chunkBytes <= bodyBytes ? chunk : chunk.subarray(0, bodyBytes - sent);
        if (!(await write(piece))) return;
        await new Promise((next) => setTimeout(next, pauseMs));
      }
    })();
  });
}
