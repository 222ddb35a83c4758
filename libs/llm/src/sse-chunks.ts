import { createParser } from 'eventsource-parser';
import { APIError } from 'openai';
import type { ChatCompletionChunk } from 'openai/resources/chat/completions';

/** Reads a streamed chat completion's SSE body, one network read at a time. */
export interface ChunkReader {
  /** The chunks completed by these bytes, in order. */
  read(bytes: Uint8Array): ChatCompletionChunk[];
  /** The chunks of an event the body ended inside (no blank line after it). */
  end(): ChatCompletionChunk[];
  /** `[DONE]` arrived: nothing after it is read. */
  readonly done: boolean;
  /** An error event or an unreadable one: the chunks before it were returned, then this is thrown. */
  readonly failure: Error | undefined;
}

/**
 * The SSE decoding of a chat-completions stream, as the `openai` SDK's `Stream` does it (its
 * legacy mode: `[DONE]` ends it, an `error` event or a payload with `error` is an `APIError`, an
 * unparsable payload a `SyntaxError`), without its chain of async generators: the SDK passes
 * every token through five of them (body reader, chunks, SSE messages, JSON, normalisation),
 * a promise and several microtasks each, which was a fifth of a worker's CPU per streamed token
 * (docs/decisions/0034-per-frame-work-off-the-token-path.md). The SDK still builds, sends and
 * checks the request (`asResponse()`); the SSE syntax is `eventsource-parser`'s.
 */
export function createChunkReader(headers: Headers): ChunkReader {
  const decoder = new TextDecoder();
  let chunks: ChatCompletionChunk[] = [];
  let done = false;
  let failure: Error | undefined;
  const parser = createParser({
    onEvent(event) {
      if (done || failure) return;
      if (event.data === '[DONE]') {
        done = true;
        return;
      }
      let data: unknown;
      try {
        data = JSON.parse(event.data);
      } catch {
        failure = new SyntaxError('Error reading response: malformed server-sent event JSON.');
        return;
      }
      const payload = data as { error?: unknown } | null;
      if (event.event === 'error') {
        failure = new APIError(undefined, (payload?.error ?? payload) as object, undefined, headers);
      } else if (payload?.error) {
        failure = new APIError(undefined, payload.error as object, undefined, headers);
      } else {
        chunks.push(data as ChatCompletionChunk);
      }
    },
  });
  const take = () => {
    const taken = chunks;
    chunks = [];
    return taken;
  };
  return {
    read(bytes) {
      parser.feed(decoder.decode(bytes, { stream: true }));
      return take();
    },
    end() {
      // A body may end without the blank line after its last event: that event still counts.
      parser.feed(`${decoder.decode()}\n\n`);
      return take();
    },
    get done() {
      return done;
    },
    get failure() {
      return failure;
    },
  };
}

/** An abort of the body read (the SDK's `isTransportAbortError`): the stream ends, the caller checks why. */
export function isTransportAbort(error: unknown): boolean {
  return !(error instanceof APIError) && (error as { name?: unknown } | null)?.name === 'AbortError';
}
