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
