import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createChatCompletionsHandler, type IdSource } from './chat-completions.ts';
import { handleControlRoute } from './control-routes.ts';
import { createGates } from './gates.ts';
import { BodyTooLargeError, headerValue, providerError, readBody, sendJson } from './http-io.ts';
import { createRequestLog, type RecordedRequest, type RequestFilter } from './request-log.ts';
import { Script, type ScriptInput } from './script-schema.ts';
import { createScriptStore } from './script-store.ts';

export interface FakeLlmOptions {
  /** 0 (the default) picks a free port. */
  port?: number;
  host?: string;
  /** Delay before the first token; default 0. */
  ttftMs?: number;
  /** Pacing of tokens; default 0 = as fast as possible. */
  tokensPerSecond?: number;
  /** Requests estimated above this many prompt tokens get `context_length_exceeded`. */
  maxInputTokens?: number;
  model?: string;
  /** Oldest recorded requests are dropped beyond this; default 10 000. */
  maxRecordedRequests?: number;
}

export interface FakeLlm {
  /** Base URL ending in `/v1`, as OpenAI clients expect. */
  url: string;
  port: number;
  close(): Promise<void>;
  addScript(script: ScriptInput): void;
  clearScripts(): void;
  requests(filter?: RequestFilter): RecordedRequest[];
  clearRequests(): void;
  /** Resolves once a scripted stream is held at the named gate (script step `pause`). */
  gateReached(name: string): Promise<void>;
  /** Lets streams held at the named gate go on. */
  releaseGate(name: string): void;
}

export const DEFAULT_FAKE_MODEL = 'quill-fake-1';

export async function startFakeLlm(options: FakeLlmOptions = {}): Promise<FakeLlm> {
  const model = options.model ?? DEFAULT_FAKE_MODEL;
  const scripts = createScriptStore();
  const requestLog = createRequestLog(options.maxRecordedRequests ?? 10_000);
  const gates = createGates();
  const handleChat = createChatCompletionsHandler({
    gates,
    settings: {
      model,
      ttftMs: options.ttftMs ?? 0,
      tokensPerSecond: options.tokensPerSecond ?? 0,
      maxInputTokens: options.maxInputTokens,
    },
    scripts,
    requestLog,
    ids: createIdSource(),
  });

  const route = async (request: IncomingMessage, response: ServerResponse, signal: AbortSignal) => {
    const url = new URL(request.url ?? '/', 'http://fake-llm');
    if (await handleControlRoute(request, response, url, { scripts, requestLog, gates })) return;
    if (!url.pathname.startsWith('/v1/')) {
      sendJson(response, 404, providerError(`unknown path ${url.pathname}`, 'invalid_request_error', null));
      return;
    }
    if (!isAuthorized(request)) {
      const message = 'You did not provide an API key (Authorization: Bearer <key>).';
      sendJson(response, 401, providerError(message, 'invalid_request_error', 'invalid_api_key'));
      return;
    }
    if (request.method === 'GET' && url.pathname === '/v1/models') {
      sendJson(response, 200, {
        object: 'list',
        data: [{ id: model, object: 'model', created: 0, owned_by: 'quill-fake-llm' }],
      });
      return;
    }
    if (request.method === 'POST' && url.pathname === '/v1/chat/completions') {
      await handleChat(request, response, await readBody(request), signal);
      return;
    }
    sendJson(response, 404, providerError(`unknown path ${url.pathname}`, 'invalid_request_error', null));
  };

  const server = createServer((request, response) => {
    const abort = new AbortController();
    // A client that goes away mid-stream stops the pacing timers of its response.
    response.on('close', () => abort.abort());
    route(request, response, abort.signal).catch((error: unknown) => {
      if (abort.signal.aborted) return;
      if (response.headersSent) {
        response.destroy();
      } else if (error instanceof BodyTooLargeError) {
        sendJson(response, 413, providerError(error.message, 'invalid_request_error', null));
      } else {
        sendJson(response, 500, providerError(String(error), 'fake_llm_error', null));
      }
    });
  });

  // Hosted providers keep idle connections for a minute or more; Node's 5 s default would close a
  // pooled connection under a client that paused (a slow test), which then reads ECONNRESET.
  server.keepAliveTimeout = 65_000;
  const host = options.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://${urlHost(host)}:${port}/v1`,
    port,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        // Streams in progress and idle keep-alive sockets would otherwise hold close() open.
        server.closeAllConnections();
      }),
    addScript: (script) => scripts.add(Script.parse(script)),
    clearScripts: () => scripts.clear(),
    requests: (filter) => requestLog.list(filter),
    clearRequests: () => requestLog.clear(),
    gateReached: (name) => gates.reached(name),
    releaseGate: (name) => gates.release(name),
  };
}

function isAuthorized(request: IncomingMessage): boolean {
  const authorization = headerValue(request, 'authorization');
  return authorization !== undefined && /^Bearer\s+\S+/i.test(authorization);
}

/** Unique per server instance, so a run that fails over between two fakes never reuses an id. */
function createIdSource(): IdSource {
  const tag = randomBytes(3).toString('hex');
  let completions = 0;
  let toolCalls = 0;
  return {
    completionId: () => `chatcmpl-${tag}${++completions}`,
    toolCallId: () => `call_${tag}_${++toolCalls}`,
  };
}

function urlHost(host: string): string {
  if (host === '0.0.0.0' || host === '::') return '127.0.0.1';
  return host.includes(':') ? `[${host}]` : host;
}
