import { createServer, type Server, type ServerResponse } from 'node:http';
import { type AddressInfo, connect, type Socket } from 'node:net';
import { encodeSseComment, encodeSseFrame, encodeSseRetry, frame } from '@quill/contracts';
import { afterEach, describe, expect, it } from 'vitest';
import { drained, startSseResponse, writeSseEvent } from '../src/sse-write.ts';

/**
 * The relay's single-write SSE events on a real HTTP server, read byte for byte by a raw TCP
 * client: the body must be what `response.write` would have sent.
 */
let server: Server | undefined;
const clients: Socket[] = [];

afterEach(async () => {
  for (const client of clients.splice(0)) client.destroy();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = undefined;
});

/** Starts a server whose handler gets each response once its stream has started with `events[0]`. */
async function serve(handler: (response: ServerResponse) => void | Promise<void>): Promise<number> {
  server = createServer((_request, response) => {
    startSseResponse(response, { 'content-type': 'text/event-stream' }, events[0]!);
    void handler(response);
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

/** Sends a raw request and collects every byte until the server closes or `until` holds. */
function rawExchange(
  port: number,
  request: string,
  until: (received: string) => boolean = () => false,
): Promise<string> {
  return new Promise((resolve, reject) => {
    const client = connect(port, '127.0.0.1', () => client.write(request));
    clients.push(client);
    let received = '';
    client.setEncoding('utf8');
    client.on('data', (chunk: string) => {
      received += chunk;
      if (until(received)) resolve(received);
    });
    client.on('end', () => resolve(received));
    client.on('error', reject);
  });
}

/** The body of a chunked response, decoded; throws on any framing error. */
function dechunk(raw: string): { body: string; terminated: boolean } {
  const headEnd = raw.indexOf('\r\n\r\n');
  let rest = Buffer.from(raw.slice(headEnd + 4), 'utf8');
  let body = '';
  for (;;) {
    const lineEnd = rest.indexOf('\r\n');
    if (lineEnd < 0) return { body, terminated: false };
    const size = Number.parseInt(rest.subarray(0, lineEnd).toString('latin1'), 16);
    if (!Number.isInteger(size))
      throw new Error(`bad chunk size line: ${rest.subarray(0, lineEnd).toString()}`);
    if (size === 0)
      return { body, terminated: rest.subarray(lineEnd, lineEnd + 4).toString() === '\r\n\r\n' };
    const chunk = rest.subarray(lineEnd + 2, lineEnd + 2 + size);
    if (rest.subarray(lineEnd + 2 + size, lineEnd + 4 + size).toString() !== '\r\n')
      throw new Error('chunk not closed by CRLF');
    body += chunk.toString('utf8');
    rest = rest.subarray(lineEnd + 4 + size);
  }
}

const runId = '0b5c6f2e-8a51-4c1a-9a0e-7f6a2d7b9c11';
/** Events as the relay writes them: the retry line, frames encoded by the contracts, a heartbeat. */
const events = [
  encodeSseRetry(3000),
  encodeSseFrame(frame('text', runId, { agent: 'writer', content: '第一章' }), 1),
  encodeSseComment('heartbeat'),
  encodeSseFrame(frame('text', runId, { agent: 'writer', content: '雨夜 — "quoted" é' }), 2),
  encodeSseFrame(frame('done', runId, {}), 3),
];
/** A text frame of `content`, e.g. one big enough to fill a socket. */
const textEvent = (content: string) => encodeSseFrame(frame('text', runId, { agent: 'writer', content }), 9);

describe('writeSseEvent', () => {
  it('sends each event as one well-formed chunk after the head, in order, and response.end closes the body', async () => {
    const port = await serve((response) => {
      // The stream started with events[0], as the relay starts with its retry line.
      expect(writeSseEvent(response, events[1]!)).toBe(true);
      writeSseEvent(response, events[2]!);
      writeSseEvent(response, events[3]!);
      setImmediate(() => {
        writeSseEvent(response, events[4]!);
        response.end();
      });
    });
    const raw = await rawExchange(port, 'GET /stream HTTP/1.1\r\nHost: relay\r\n\r\n', (received) =>
      received.endsWith('0\r\n\r\n'),
    );
    expect(raw).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(raw.toLowerCase()).toContain('transfer-encoding: chunked');
    expect(dechunk(raw)).toEqual({ body: events.join(''), terminated: true });
  });

  it('keeps the connection usable for the next request once the stream has ended', async () => {
    const port = await serve((response) => {
      writeSseEvent(response, events[1]!);
      response.end();
    });
    const request = 'GET /stream HTTP/1.1\r\nHost: relay\r\n\r\n';
    const raw = await new Promise<string>((resolve, reject) => {
      const client = connect(port, '127.0.0.1', () => client.write(request));
      clients.push(client);
      let received = '';
      let asked = false;
      client.setEncoding('utf8');
      client.on('data', (chunk: string) => {
        received += chunk;
        const ends = received.split('0\r\n\r\n').length - 1;
        if (ends === 1 && !asked) {
          asked = true;
          client.write(request);
        }
        if (ends === 2) resolve(received);
      });
      client.on('error', reject);
    });
    const [first, second] = raw.split(/(?=HTTP\/1\.1 200 OK)/);
    expect(dechunk(first!)).toEqual({ body: events[0]! + events[1]!, terminated: true });
    expect(dechunk(second!)).toEqual({ body: events[0]! + events[1]!, terminated: true });
  });

  it('writes an HTTP/1.0 client its events unframed (its body is not chunked) and closes at the end', async () => {
    const port = await serve((response) => {
      for (const event of events.slice(1)) writeSseEvent(response, event);
      response.end();
    });
    const raw = await rawExchange(port, 'GET /stream HTTP/1.0\r\nHost: relay\r\n\r\n');
    expect(raw.toLowerCase()).not.toContain('transfer-encoding');
    expect(raw.slice(raw.indexOf('\r\n\r\n') + 4)).toBe(events.join(''));
  });

  it('says when the socket is full, and drained() resolves once the client reads again', async () => {
    const event = textEvent('字'.repeat(2000));
    let full!: (writes: number) => void;
    const filled = new Promise<number>((resolve) => {
      full = resolve;
    });
    const port = await serve(async (response) => {
      let writes = 1;
      while (writeSseEvent(response, event)) writes++;
      const waiting = drained(response);
      full(writes);
      await waiting;
      writeSseEvent(response, events[4]!);
      response.end();
    });
    const client = connect(port, '127.0.0.1', () => client.write('GET / HTTP/1.1\r\nHost: r\r\n\r\n'));
    clients.push(client);
    client.pause();
    // Nothing is read until the server has filled the socket and is waiting for it to drain.
    const writes = await filled;
    const raw = await new Promise<string>((resolve, reject) => {
      let received = '';
      client.setEncoding('utf8');
      client.on('data', (chunk: string) => {
        received += chunk;
        if (received.endsWith('0\r\n\r\n')) resolve(received);
      });
      client.on('error', reject);
      client.resume();
    });
    expect(dechunk(raw)).toEqual({ body: events[0]! + event.repeat(writes) + events[4]!, terminated: true });
  });

  it('leaves the socket uncorked when the head is refused, so an error answer written after it goes out', async () => {
    server = createServer((_request, response) => {
      expect(() =>
        startSseResponse(response, { 'content-type': 'text/event-stream', 'x-bad': 'a\nb' }, events[0]!),
      ).toThrow();
      // Written, not ended: `end()` would uncork the socket itself and hide a cork left behind.
      response.writeHead(500, { 'content-type': 'text/plain' });
      response.write('refused');
    });
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    const raw = await rawExchange(
      (server.address() as AddressInfo).port,
      'GET / HTTP/1.1\r\nHost: r\r\n\r\n',
      (received) => received.includes('refused'),
    );
    expect(raw).toMatch(/^HTTP\/1\.1 500 /);
    expect(dechunk(raw)).toEqual({ body: 'refused', terminated: false });
  });

  it('drained() also ends when the response closes under a full socket', async () => {
    let closedWhileWaiting: Promise<void> | undefined;
    const port = await serve((response) => {
      const event = textEvent('x'.repeat(64 * 1024));
      while (writeSseEvent(response, event)) {}
      closedWhileWaiting = drained(response);
    });
    const client = connect(port, '127.0.0.1', () => client.write('GET / HTTP/1.1\r\nHost: r\r\n\r\n'));
    clients.push(client);
    client.pause();
    // (A boolean: expect.poll would wait for a promise itself.)
    await expect.poll(() => closedWhileWaiting !== undefined).toBe(true);
    client.destroy();
    await expect(closedWhileWaiting).resolves.toBeUndefined();
  });
});
