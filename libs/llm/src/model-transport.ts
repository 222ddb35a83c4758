import type { Readable } from 'node:stream';
import { Agent, type Dispatcher, interceptors, request } from 'undici';

export interface ModelTransport {
  /** For the SDK's `fetch` option. */
  fetch(input: string | URL | Request, init?: RequestInit): Promise<Response>;
  /**
   * The body to read: the Node stream `fetch` left for this response, else the response's own
   * body (a response from the platform's fetch).
   */
  streamBodyOf(response: Response): AsyncIterable<Uint8Array> | null;
}

/**
 * The `fetch` the SDK sends model calls with: undici's request API instead of the global
 * `fetch`. The SDK still builds, sends and checks the request (status, error body, retries,
 * aborts); what changes is how a streamed reply is read. Through `fetch`, every network read of
 * the body passes a WHATWG byte stream (a controller enqueue, a pending-read promise, a reader
 * promise), several microtasks per token; a Node stream hands the same bytes over for about two
 * thirds of that CPU (docs/decisions/0046-model-stream-transport.md). A successful response is
 * returned without a body and its Node body is found with `streamBodyOf`; an error response
 * carries its (short) body as text, so the SDK's APIError reads as before. undici publishes its
 * diagnostics channels for these requests too, so a call's HTTP span is recorded as before.
 */
export function createModelTransport(): ModelTransport {
  // The body of each successful response, left unread for the caller (weakly: a response the
  // caller drops takes its entry with it).
  const streamBodies = new WeakMap<Response, Readable>();
  // Redirects are followed as `fetch` follows them (a 307/308 keeps the POST and its body, the
  // credentials go no further than their origin); undici's request API alone would hand the 3xx
  // back as a failed call.
  const dispatcher = new Agent().compose(interceptors.redirect({ maxRedirections: MAX_REDIRECTS }));
  return {
    fetch: (input, init) => send(dispatcher, streamBodies, input, init),
    streamBodyOf: (response) => streamBodies.get(response) ?? response.body,
  };
}

/** As many as `fetch` follows. */
const MAX_REDIRECTS = 20;

async function send(
  dispatcher: Dispatcher,
  streamBodies: WeakMap<Response, Readable>,
  input: string | URL | Request,
  init: RequestInit = {},
): Promise<Response> {
  if (
    input instanceof Request ||
    (init.body !== undefined && init.body !== null && typeof init.body !== 'string')
  ) {
    // Not a call this transport was made for (a stream or form body): the platform's fetch.
    return fetch(input, init);
  }
  const reply = await request(input, {
    method: (init.method ?? 'GET') as Dispatcher.HttpMethod,
    headers: headerRecord(init.headers),
    body: init.body ?? null,
    signal: init.signal ?? null,
    dispatcher,
  });
  const headers = new Headers();
  for (const [name, value] of Object.entries(reply.headers)) {
    if (Array.isArray(value)) for (const item of value) headers.append(name, item);
    else if (value !== undefined) headers.set(name, value);
  }
  if (reply.statusCode >= 200 && reply.statusCode < 300) {
    const response = new Response(null, { status: reply.statusCode, headers });
    streamBodies.set(response, reply.body);
    return response;
  }
  // A refusal's body is the provider's error JSON: read whole, as the SDK reads it. An empty one
  // stays null (a Response for a null-body status such as 304 must not have one).
  const text = await reply.body.text();
  return new Response(text === '' ? null : text, { status: reply.statusCode, headers });
}

function headerRecord(headers: RequestInit['headers']): Record<string, string> {
  if (!headers) return {};
  if (headers instanceof Headers || Array.isArray(headers)) return Object.fromEntries(headers);
  return { ...(headers as Record<string, string>) };
}
