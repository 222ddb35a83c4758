import { SseFrame } from '@quill/contracts';
import { createParser } from 'eventsource-parser';
import { QuillApiError } from './errors.ts';

/** One frame as the stream delivered it: its JetStream sequence (the SSE id) and the frame. */
export interface StreamedFrame {
  readonly id: number;
  readonly frame: SseFrame;
}

export interface RunStreamOptions {
  /** Reconnects after a dropped connection before giving up (each resumes after the last id). */
  maxReconnects?: number;
  signal?: AbortSignal;
}

export type OpenStream = (lastEventId: number | undefined, signal: AbortSignal) => Promise<Response>;

const DEFAULT_RECONNECTS = 5;
const DEFAULT_RETRY_MS = 2000;

/**
 * A run's frames, in order and each once, until `done`: a dropped connection is resumed from the
 * last id seen (README "Run lifecycle"), waiting the server's `retry:` first; a resume at or after
 * `done` is 204 and ends the stream. Every frame is checked against the SSE contract.
 */
export async function* readRunStream(
  first: Response,
  reopen: OpenStream,
  options: RunStreamOptions = {},
): AsyncGenerator<StreamedFrame> {
  let response: Response | undefined = first;
  let lastId: number | undefined;
  let retryMs = DEFAULT_RETRY_MS;
  let reconnects = 0;
  const controller = new AbortController();
  options.signal?.addEventListener('abort', () => controller.abort(options.signal?.reason), { once: true });
  try {
    for (;;) {
      if (!response) {
        if (reconnects++ >= (options.maxReconnects ?? DEFAULT_RECONNECTS))
          throw new Error('the run stream kept dropping');
        await sleep(retryMs, controller.signal);
        response = await reopen(lastId, controller.signal);
      }
      if (response.status === 204) return;
      if (!response.ok)
        throw new QuillApiError(response.status, await response.json().catch(() => undefined));
      const frames: StreamedFrame[] = [];
      const parser = createParser({
        onEvent(event) {
          frames.push({ id: Number(event.id), frame: SseFrame.parse(JSON.parse(event.data)) });
        },
        onRetry(milliseconds) {
          retryMs = milliseconds;
        },
      });
      const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
      response = undefined;
      try {
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          parser.feed(value);
          for (const streamed of frames.splice(0)) {
            // A resumed stream starts after lastId; anything at or before it was already delivered.
            if (lastId !== undefined && streamed.id <= lastId) continue;
            lastId = streamed.id;
            yield streamed;
            if (streamed.frame.type === 'done') return;
          }
        }
      } catch (error) {
        if (controller.signal.aborted) throw error;
        // The connection dropped mid-stream: resume below.
      } finally {
        await reader.cancel().catch(() => undefined);
      }
    }
  } finally {
    controller.abort();
  }
}

function sleep(milliseconds: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(resolve, milliseconds);
    signal.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        reject(signal.reason);
      },
      { once: true },
    );
  });
}
