import type { SseFrame } from '@quill/contracts';
import { createParser } from 'eventsource-parser';

export interface ReceivedFrame {
  id: string | undefined;
  frame: SseFrame;
}

export interface StreamResult {
  status: number;
  headers: Headers;
  frames: ReceivedFrame[];
  /** JSON body when the response was not an event stream (errors). */
  body?: unknown;
  comments: number;
}

/**
 * Reads an SSE response as a browser would. `stopAfter` lets a test disconnect mid-run (after
 * that many frames), which is how resume is exercised.
 */
export async function readStream(
  response: Response,
  options: { stopAfter?: number; onFrame?: (frame: ReceivedFrame) => void } = {},
): Promise<StreamResult> {
  const result: StreamResult = {
    status: response.status,
    headers: response.headers,
    frames: [],
    comments: 0,
  };
  if (!response.headers.get('content-type')?.startsWith('text/event-stream')) {
    result.body = await response.json().catch(() => undefined);
    return result;
  }
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let finished = false;
  const parser = createParser({
    onEvent(event) {
      const received = { id: event.id, frame: JSON.parse(event.data) as SseFrame };
      result.frames.push(received);
      options.onFrame?.(received);
      if (received.frame.type === 'done') finished = true;
      if (options.stopAfter !== undefined && result.frames.length >= options.stopAfter) finished = true;
    },
    onComment() {
      result.comments++;
    },
  });
  while (!finished) {
    const { value, done } = await reader.read();
    if (done) break;
    parser.feed(decoder.decode(value, { stream: true }));
  }
  await reader.cancel().catch(() => undefined);
  return result;
}

export function startRun(
  baseUrl: string,
  apiKey: string | undefined,
  body: unknown,
  init: { signal?: AbortSignal } = {},
): Promise<Response> {
  return fetch(`${baseUrl}/api/v1/agent/stream`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      ...(apiKey ? { authorization: `Bearer ${apiKey}` } : {}),
    },
    body: typeof body === 'string' ? body : JSON.stringify(body),
    ...(init.signal ? { signal: init.signal } : {}),
  });
}

export function frameTypes(result: StreamResult): string[] {
  return result.frames.map((received) => received.frame.type);
}
