import {
  type AgentStopBody,
  type AgentStreamBody,
  type AgentSuggestBody,
  AgentSuggestResponse,
  type CreateFileBody,
  QuotaResponse,
  StreamTicketResponse,
  type UpdateFileBody,
  UsageTodayResponse,
} from '@quill/contracts';
import { z } from 'zod';
import { QuillApiError } from './errors.ts';
import { productMethods } from './product.ts';
import { type OpenStream, type RunStreamOptions, readRunStream, type StreamedFrame } from './run-stream.ts';

export interface QuillClientOptions {
  /** The gateway, e.g. `https://quill.example.com` (the client adds `/api/v1`). */
  baseUrl: string;
  /** An API key or access token, or a function returning the current one. */
  token?: string | (() => string | Promise<string>);
  fetch?: typeof fetch;
}

/** A started run: its ids (from the response headers) and its frames, resumed across drops. */
export interface RunStream extends AsyncIterable<StreamedFrame> {
  readonly runId: string;
  readonly sessionId: string;
  readonly traceId: string | undefined;
}

const TokenResponse = z.object({
  access_token: z.string(),
  token_type: z.literal('Bearer'),
  expires_in: z.number(),
});
// Bodies the contracts describe only in the README: the fields this client hands back.
const FileView = z.looseObject({
  id: z.string(),
  title: z.string(),
  version: z.number(),
  content: z.string().optional(),
});
const FileResponse = z.object({ file: FileView });
const FilesResponse = z.object({ files: z.array(FileView) });
const RunView = z.looseObject({ run_id: z.string(), phase: z.string(), stop_reason: z.string().nullable() });

/**
 * A small typed client of the HTTP API (the routes of `libs/contracts` api-routes.ts, the same
 * zod schemas the gateway parses with): JSON calls throw `QuillApiError` with the catalog code;
 * `agent.stream` yields a run's frames and resumes after a dropped connection.
 */
export function createQuillClient(options: QuillClientOptions) {
  const api = `${options.baseUrl.replace(/\/$/, '')}/api/v1`;
  const fetcher = options.fetch ?? fetch;
  const authorization = async (): Promise<Record<string, string>> => {
    const token = typeof options.token === 'function' ? await options.token() : options.token;
    return token ? { authorization: `Bearer ${token}` } : {};
  };
  const send = async (method: string, path: string, body?: unknown, init: RequestInit = {}) =>
    fetcher(`${api}${path}`, {
      ...init,
      method,
      headers: {
        ...(await authorization()),
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...(init.headers as Record<string, string> | undefined),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  const json = async <S extends z.ZodType>(schema: S, method: string, path: string, body?: unknown) => {
    const response = await send(method, path, body);
    const parsed = await response.json().catch(() => undefined);
    if (!response.ok) throw new QuillApiError(response.status, parsed);
    return schema.parse(parsed) as z.infer<S>;
  };
  const resumeFrom =
    (runId: string): OpenStream =>
    (lastEventId, signal) =>
      send('GET', `/agent/runs/${runId}/stream`, undefined, {
        signal,
        headers: lastEventId === undefined ? {} : { 'last-event-id': String(lastEventId) },
      });

  return {
    ...productMethods(json, send),
    auth: {
      token: (apiKey: string) => json(TokenResponse, 'POST', '/auth/token', { api_key: apiKey }),
    },
    agent: {
      async stream(
        body: z.input<typeof AgentStreamBody>,
        streamOptions: RunStreamOptions = {},
      ): Promise<RunStream> {
        const response = await send(
          'POST',
          '/agent/stream',
          body,
          streamOptions.signal ? { signal: streamOptions.signal } : {},
        );
        if (!response.ok)
          throw new QuillApiError(response.status, await response.json().catch(() => undefined));
        const runId = response.headers.get('x-quill-run-id')!;
        return {
          runId,
          sessionId: response.headers.get('x-quill-session-id')!,
          traceId: response.headers.get('x-quill-trace-id') ?? undefined,
          [Symbol.asyncIterator]: () => readRunStream(response, resumeFrom(runId), streamOptions),
        };
      },
      /** The run's frames after `lastEventId` (all when unset); nothing once it has ended. */
      async *resume(runId: string, lastEventId?: number, streamOptions: RunStreamOptions = {}) {
        const open = resumeFrom(runId);
        const first = await open(lastEventId, streamOptions.signal ?? new AbortController().signal);
        yield* readRunStream(first, open, streamOptions);
      },
      streamTicket: (runId: string) =>
        json(StreamTicketResponse, 'POST', `/agent/runs/${runId}/stream-ticket`, {}),
      stop: (body: AgentStopBody) => json(z.looseObject({ run_id: z.string() }), 'POST', '/agent/stop', body),
      steer: (sessionId: string, message: string) =>
        json(z.looseObject({ run_id: z.string() }), 'POST', '/agent/steer', {
          session_id: sessionId,
          message,
        }),
      suggest: (body: AgentSuggestBody) => json(AgentSuggestResponse, 'POST', '/agent/suggest', body),
      run: (runId: string) => json(RunView, 'GET', `/agent/runs/${runId}`),
    },
    files: {
      list: (projectId: string) => json(FilesResponse, 'GET', `/projects/${projectId}/files`),
      get: (projectId: string, fileId: string) =>
        json(FileResponse, 'GET', `/projects/${projectId}/files/${fileId}`),
      create: (projectId: string, body: z.input<typeof CreateFileBody>) =>
        json(FileResponse, 'POST', `/projects/${projectId}/files`, body),
      save: (projectId: string, fileId: string, body: UpdateFileBody) =>
        json(FileResponse, 'PUT', `/projects/${projectId}/files/${fileId}`, body),
    },
    quota: () => json(QuotaResponse, 'GET', '/quota'),
    usageToday: () => json(UsageTodayResponse, 'GET', '/usage/today'),
    openApi: () =>
      json(
        z.looseObject({ openapi: z.string(), paths: z.record(z.string(), z.unknown()) }),
        'GET',
        '/openapi.json',
      ),
  };
}

export type QuillClient = ReturnType<typeof createQuillClient>;
