import type { IncomingMessage, ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { ChatRequestBody } from './chat-request.ts';
import { preciseNow } from './chunk-writer.ts';
import { planCompletion } from './completion-plan.ts';
import type { Gates } from './gates.ts';
import { headerValue, numericHeader, parseJson, providerError, sendJson } from './http-io.ts';
import { buildCompletion } from './json-response.ts';
import { defaultErrorBody, errorHeaders } from './provider-errors.ts';
import type { RecordedRequest, RequestLog } from './request-log.ts';
import { defaultStep } from './role-responses.ts';
import { isErrorStep, type Step } from './script-schema.ts';
import type { ScriptStore } from './script-store.ts';
import { disconnect, writeCompletionStream } from './stream-response.ts';
import { estimatePromptTokens } from './tokenizer.ts';

export interface CompletionSettings {
  model: string;
  ttftMs: number;
  tokensPerSecond: number;
  maxInputTokens: number | undefined;
}

export interface IdSource {
  completionId(): string;
  toolCallId(): string;
}

export interface ChatCompletionsDependencies {
  gates: Gates;
  settings: CompletionSettings;
  scripts: ScriptStore;
  requestLog: RequestLog;
  ids: IdSource;
}

export type ChatCompletionsHandler = (
  request: IncomingMessage,
  response: ServerResponse,
  rawBody: string,
  signal: AbortSignal,
) => Promise<void>;

export function createChatCompletionsHandler(
  dependencies: ChatCompletionsDependencies,
): ChatCompletionsHandler {
  const { settings, scripts, requestLog, ids } = dependencies;
  return async (request, response, rawBody, signal) => {
    const runId = headerValue(request, 'x-quill-run-id');
    const role = headerValue(request, 'x-quill-role');
    const json = parseJson(rawBody);
    const recorded: RecordedRequest = {
      run_id: runId ?? null,
      role: role ?? null,
      received_at: Date.now(),
      headers: recordedHeaders(request),
      body: json ?? rawBody,
    };
    requestLog.record(recorded);

    const parsed = ChatRequestBody.safeParse(json);
    if (!parsed.success) {
      const message = `invalid chat completion request: ${parsed.error.issues[0]?.message ?? 'unreadable body'}`;
      sendJson(response, 400, providerError(message, 'invalid_request_error', null));
      return;
    }
    const body = parsed.data;
    const promptTokens = estimatePromptTokens(body.messages);
    if (settings.maxInputTokens !== undefined && promptTokens > settings.maxInputTokens) {
      const message = `This model's maximum context length is ${settings.maxInputTokens} tokens. However, your messages resulted in ${promptTokens} tokens.`;
      sendJson(
        response,
        400,
        providerError(message, 'invalid_request_error', 'context_length_exceeded', 'messages'),
      );
      return;
    }

    const lookup = scripts.next({ runId, role });
    if (lookup.kind === 'exhausted') {
      const message = `script exhausted: no scripted response left for ${JSON.stringify(lookup.match)}`;
      sendJson(response, 500, providerError(message, 'fake_llm_error', 'script_exhausted'));
      return;
    }
    const step: Step = lookup.kind === 'step' ? lookup.step : defaultStep(role, body.messages);
    const ttftMs = step.ttft_ms ?? numericHeader(request, 'x-fake-ttft-ms') ?? settings.ttftMs;
    const tokensPerSecond =
      step.tokens_per_second ??
      numericHeader(request, 'x-fake-tokens-per-second') ??
      settings.tokensPerSecond;

    if (isErrorStep(step)) {
      if (ttftMs > 0) await sleep(ttftMs, undefined, { signal });
      const errorBody = step.error.body ?? defaultErrorBody(step.error.status);
      sendJson(response, step.error.status, errorBody, errorHeaders(step.error));
      return;
    }
    const plan = planCompletion(step, { promptTokens, nextToolCallId: ids.toolCallId });
    const completionId = ids.completionId();
    const model = step.response_model ?? body.model ?? settings.model;
    const reportsUsage =
      plan.sendUsage && (body.stream !== true || body.stream_options?.include_usage === true);
    if (reportsUsage && !plan.disconnect) recorded.usage = plan.usage;
    if (body.stream === true) {
      const includeUsage = body.stream_options?.include_usage === true;
      const stream = { started_at: preciseNow(), content_end: [] as number[], emitted_at: [] as number[] };
      recorded.stream = stream;
      let contentLength = 0;
      await writeCompletionStream(response, plan, {
        completionId,
        model,
        includeUsage,
        ttftMs,
        tokensPerSecond,
        signal,
        ...(step.pause
          ? {
              pause: {
                atChars: step.pause_at_chars ?? 0,
                hold: () => dependencies.gates.hold(step.pause!, signal),
              },
            }
          : {}),
        onContent: (delta, emittedAt) => {
          contentLength += delta.length;
          stream.content_end.push(contentLength);
          stream.emitted_at.push(emittedAt);
        },
      });
      return;
    }
    const tokenCount = plan.usage.completion_tokens;
    const generationMs = ttftMs + (tokensPerSecond > 0 ? (tokenCount * 1000) / tokensPerSecond : 0);
    if (generationMs > 0) await sleep(generationMs, undefined, { signal });
    if (plan.disconnect) {
      disconnect(response, plan.disconnect);
      return;
    }
    sendJson(response, 200, buildCompletion(plan, completionId, model));
  };
}

/** Every request header as received, the credential masked (tests check what a provider was sent). */
function recordedHeaders(request: IncomingMessage): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(request.headers)) {
    if (value === undefined) continue;
    headers[name] =
      name === 'authorization' ? 'Bearer ****' : Array.isArray(value) ? value.join(', ') : value;
  }
  return headers;
}
