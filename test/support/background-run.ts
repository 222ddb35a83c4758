import type { SseFrame } from '@quill/contracts';
import { readStream, startRun } from './sse-client.ts';
import type { Stack } from './stack.ts';

/** A unique name for a fake-LLM gate (a gate stays released once released). */
let gateCounter = 0;
export const gateName = (label: string) => `${label}-${++gateCounter}-${Date.now().toString(36)}`;

export interface BackgroundRun {
  /** The HTTP status of the stream request, once answered. */
  status: Promise<number>;
  runId: Promise<string>;
  /** Every frame the client read, with its SSE id, once the stream ended. */
  frames: Promise<Array<{ id: number; frame: SseFrame }>>;
}

/**
 * Starts a run and reads its stream to the end in the background, so a test can act (save as
 * the author, stop, kill a worker) while it streams.
 */
export function launchRun(stack: Stack, message: string): BackgroundRun {
  const status = Promise.withResolvers<number>();
  const runId = Promise.withResolvers<string>();
  const frames = (async () => {
    const response = await startRun(stack.gateways[0]!, stack.apiKey, {
      project_id: stack.projectId,
      message,
    });
    status.resolve(response.status);
    runId.resolve(response.headers.get('x-quill-run-id') ?? '');
    const result = await readStream(response);
    return result.frames.map((received) => ({ id: Number(received.id), frame: received.frame }));
  })();
  frames.catch((error: unknown) => {
    status.reject(error);
    runId.reject(error);
  });
  status.promise.catch(() => undefined);
  runId.promise.catch(() => undefined);
  return { status: status.promise, runId: runId.promise, frames };
}

/** The author's API, as the web app calls it. */
export async function authorApi(stack: Stack, path: string, init: { method?: string; body?: unknown } = {}) {
  const response = await fetch(`${stack.gateways[0]}/api/v1${path}`, {
    method: init.method ?? 'GET',
    headers: {
      authorization: `Bearer ${stack.apiKey}`,
      ...(init.body !== undefined ? { 'content-type': 'application/json' } : {}),
    },
    ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}),
  });
  const text = await response.text();
  return { status: response.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
}
