import { Agent, request } from 'node:http';

/** Milliseconds since the epoch with sub-ms precision: comparable with the fake LLM's `x_emitted_at`. */
export function preciseNow(): number {
  return performance.timeOrigin + performance.now();
}

export interface SseEvent {
  id: string | undefined;
  data: string;
  /** When the bytes holding this event arrived (preciseNow). */
  receivedAt: number;
}

export interface SseResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** The body when the response was not an event stream (an error). */
  body?: string;
  comments: number;
}

export interface SseRequest {
  url: string;
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: unknown;
  /** Return true to stop reading (the connection is then closed). */
  onEvent(event: SseEvent): boolean | undefined;
  /** A comment line arrived (the gateway's heartbeat). */
  onComment?(): void;
  signal?: AbortSignal;
}

// One connection per stream, as a browser tab would hold; no pool limit on loopback.
const agent = new Agent({ keepAlive: false, maxSockets: Number.POSITIVE_INFINITY });

/**
 * A lean SSE client on node:http (no web streams, no per-event parser objects), so that one
 * benchmark process can read hundreds of streams while measuring when each event arrived. The
 * same code reads Quill's frames and the fake LLM's chunks, so their delays compare directly.
 */
export function readSse(options: SseRequest): Promise<SseResponse> {
  return new Promise((resolve, reject) => {
    const payload = options.body === undefined ? undefined : JSON.stringify(options.body);
    const outgoing = request(
      options.url,
      {
        method: options.method ?? (payload === undefined ? 'GET' : 'POST'),
        agent,
        headers: {
          accept: 'text/event-stream',
          ...(payload === undefined ? {} : { 'content-type': 'application/json' }),
          ...options.headers,
        },
        ...(options.signal ? { signal: options.signal } : {}),
      },
      (response) => {
        const result: SseResponse = {
          status: response.statusCode ?? 0,
          headers: response.headers,
          comments: 0,
        };
        response.setEncoding('utf8');
        if (!String(response.headers['content-type'] ?? '').startsWith('text/event-stream')) {
          let body = '';
          response.on('data', (chunk: string) => {
            body += chunk;
          });
          response.on('end', () => resolve({ ...result, body }));
          response.on('error', reject);
          return;
        }
        let buffer = '';
        let finished = false;
        response.on('data', (chunk: string) => {
          if (finished) return;
          const receivedAt = preciseNow();
          buffer += chunk;
          let end = buffer.indexOf('\n\n');
          while (end !== -1) {
            const block = buffer.slice(0, end);
            buffer = buffer.slice(end + 2);
            end = buffer.indexOf('\n\n');
            if (block.startsWith(':')) {
              result.comments++;
              options.onComment?.();
              continue;
            }
            let id: string | undefined;
            let data = '';
            for (const line of block.split('\n')) {
              if (line.startsWith('data: ')) data += data ? `\n${line.slice(6)}` : line.slice(6);
              else if (line.startsWith('id: ')) id = line.slice(4);
            }
            // A block without data (the stream's `retry:`) is no event.
            if (!data) continue;
            if (options.onEvent({ id, data, receivedAt })) {
              finished = true;
              response.destroy();
              resolve(result);
              return;
            }
          }
        });
        response.on('end', () => resolve(result));
        response.on('close', () => resolve(result));
        response.on('error', (error) => (finished ? resolve(result) : reject(error)));
      },
    );
    outgoing.on('error', reject);
    outgoing.end(payload);
  });
}
