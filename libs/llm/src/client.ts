import type { ChatMessage, TokenUsage } from '@quill/contracts';
import OpenAI from 'openai';
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import { readBody } from './body-reads.ts';
import { toLlmCallError } from './call-errors.ts';
import { LlmCallError } from './errors.ts';
import { createModelTransport, type ModelTransport } from './model-transport.ts';
import { type LlmProvider, modelFor } from './provider.ts';
import { requestFields } from './request-fields.ts';
import { createChunkReader, isTransportAbort } from './sse-chunks.ts';
import { StreamAssembler } from './stream-assembler.ts';
import {
  encodingForModel,
  estimatePromptTokens,
  estimateTextTokens,
  precountTokens,
  promptTexts,
} from './token-estimate.ts';
import type { ChatRequest, LlmAttempt, LlmCallResult, LlmClient, LlmEvent, LlmLogger } from './types.ts';

/**
 * The three silences a streamed call may hit. None caps the whole call: a long chapter may
 * stream for minutes as long as chunks keep coming.
 */
export interface LlmTimeouts {
  /** Until the response headers arrive. */
  connectMs: number;
  /** From sending the request until the first text, thinking or tool-call delta. */
  firstTokenMs: number;
  /** Between two chunks once output has started. */
  idleMs: number;
}

export interface LlmClientOptions {
  provider: LlmProvider;
  timeouts?: Partial<LlmTimeouts>;
  /** Fallback for every timeout not set in `timeouts`. */
  timeoutMs?: number;
  logger?: LlmLogger;
  /** SDK retries of a request that failed before streaming; default 0, as failover decides. */
  maxRetries?: number;
}

const DEFAULT_TIMEOUT_MS = 120_000;

export function resolveTimeouts(options: Pick<LlmClientOptions, 'timeouts' | 'timeoutMs'>): LlmTimeouts {
  const fallback = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  return {
    connectMs: options.timeouts?.connectMs ?? fallback,
    firstTokenMs: options.timeouts?.firstTokenMs ?? fallback,
    idleMs: options.timeouts?.idleMs ?? fallback,
  };
}

export function createLlmClient(options: LlmClientOptions): LlmClient {
  const timeouts = resolveTimeouts(options);
  const transport = createModelTransport();
  const openai = new OpenAI({
    baseURL: options.provider.baseUrl,
    apiKey: options.provider.apiKey,
    maxRetries: options.maxRetries ?? 0,
    // The SDK's own timeout only covers the wait for headers; ours below cover the stream.
    timeout: timeouts.connectMs,
    // Sent with undici's request API, the streamed body read as a Node stream (model-transport.ts).
    fetch: transport.fetch,
  });
  return {
    provider: { name: options.provider.name, model: options.provider.model },
    streamChat: (request) => streamChat(openai, transport, options, timeouts, request),
  };
}

async function* streamChat(
  openai: OpenAI,
  transport: ModelTransport,
  options: LlmClientOptions,
  timeouts: LlmTimeouts,
  request: ChatRequest,
): AsyncGenerator<LlmEvent, LlmCallResult, undefined> {
  const { provider, logger } = options;
  const model = request.model ?? modelFor(provider, request.role).model;
  const startedAt = performance.now();
  // One plain controller for our deadlines and the caller's stop: the SDK and undici read
  // `aborted` on every chunk, and a composite signal (AbortSignal.any) re-walks its sources each time.
  const controller = new AbortController();
  const signal = controller.signal;
  let timedOut = false;
  let timer: NodeJS.Timeout | undefined;
  let armedFor = '';
  const arm = (ms: number, phase: string) => {
    clearTimeout(timer);
    armedFor = phase;
    timer = setTimeout(
      () => {
        if (signal.aborted) return;
        timedOut = true;
        controller.abort(new Error(`model call ${phase} timeout`));
      },
      Math.max(0, ms),
    );
  };
  arm(timeouts.connectMs, 'connect');
  // An author's stop aborts as an AbortError (whatever the caller's reason): the fetch
  // instrumentation then ends its span without an error, since a stop is no failure of the call
  // (docs/operations.md "Traces"). The stop's reason is the caller's to report, not this layer's.
  const onCallerAbort = () =>
    controller.abort(new DOMException(`stopped: ${String(request.signal?.reason)}`, 'AbortError'));
  if (request.signal?.aborted) onCallerAbort();
  else request.signal?.addEventListener('abort', onCallerAbort, { once: true });
  const assembler = new StreamAssembler();
  let streaming = false;
  const failure = (error: unknown): LlmCallError =>
    toLlmCallError(error, {
      provider: provider.name,
      outputStarted: assembler.outputStarted,
      reasoningStarted: assembler.reasoningStarted,
      streaming,
      timedOut,
      callerAborted: request.signal?.aborted === true,
      usage: failedAttemptUsage(assembler, request, model, streaming),
    });

  // A usage estimate counts the prompt and the reply: the tokenizer's table (built on the first
  // count a process needs, not at start-up: most processes never count) and the counts themselves
  // are done in slices that leave the event loop to the other runs (token-estimate.ts), so the
  // synchronous estimate afterwards only looks them up.
  const countsFor = async (needed: boolean) => {
    if (!needed) return;
    await precountTokens(
      [
        ...promptTexts(request.messages, request.tools),
        assembler.text,
        assembler.thinking,
        ...assembler.toolCalls().flatMap((call) => [call.function.name, call.function.arguments]),
      ],
      encodingForModel(model),
    );
  };
  const extra = requestFields(provider, request);
  // Still reading when the caller stops iterating or the call fails: the request is aborted then.
  let bodyOpen = false;
  try {
    try {
      // The SDK builds, sends and checks the request; the body is read here (sse-chunks.ts).
      const response = await openai.chat.completions
        .create(
          {
            model,
            messages: toProviderMessages(request.messages),
            ...(request.tools && request.tools.length > 0 ? { tools: request.tools } : {}),
            ...extra.body,
            stream: true,
            stream_options: { include_usage: true },
          },
          { signal, headers: extra.headers },
        )
        .asResponse();
      const stream = transport.streamBodyOf(response);
      if (!stream) throw new Error('Attempted to iterate over a response with no body');
      streaming = true;
      // Empty keep-alive and role chunks do not count: the first-token deadline runs from the request.
      arm(timeouts.firstTokenMs - (performance.now() - startedAt), 'first token');
      const reader = createChunkReader(response.headers);
      const body = readBody(stream);
      bodyOpen = true;
      for (;;) {
        let read: IteratorResult<Uint8Array, undefined>;
        try {
          read = await body.next();
        } catch (error) {
          // As the SDK: an aborted read ends the stream; why it was aborted is checked below.
          if (signal.aborted || isTransportAbort(error)) break;
          throw error;
        }
        const chunks = read.done ? reader.end() : reader.read(read.value);
        for (const chunk of chunks) {
          const events = assembler.push(chunk);
          // Per token: restarting the same timer is much cheaper than replacing it.
          if (assembler.anyDelta) {
            if (armedFor === 'idle') timer?.refresh();
            else arm(timeouts.idleMs, 'idle');
          }
          for (const event of events) yield event;
        }
        if (reader.failure) throw reader.failure;
        if (read.done) break;
        if (reader.done) {
          body.close();
          break;
        }
      }
      bodyOpen = false;
    } catch (error) {
      await countsFor(streaming);
      throw failure(error);
    }
    // Counts are needed only when the provider reported no usage (a failed stream never does).
    await countsFor(!assembler.providerUsage);
    // The SDK ends the iteration quietly when its signal aborts, so check it ourselves.
    if (signal.aborted) throw failure(signal.reason);
    if (assembler.finishReason === undefined)
      throw failure(new Error('stream ended without a finish_reason'));
    const result = buildResult(assembler, provider.name, model, request);
    logger?.debug(
      { provider: provider.name, run_id: request.runId, role: request.role, usage: result.usage },
      'model call finished',
    );
    const attempt: LlmAttempt = {
      index: 0,
      provider: provider.name,
      // The model asked for, as failed attempts name it (the provider may answer with a dated variant).
      model,
      outcome: 'ok',
      usage: result.usage,
      outputStarted: assembler.outputStarted,
      durationMs: performance.now() - startedAt,
      trimmedToolResults: 0,
    };
    request.onAttempt?.(attempt);
    return { ...result, failovers: 0, attempts: [attempt] };
  } catch (error) {
    const callError = error instanceof LlmCallError ? error : failure(error);
    const fields = {
      provider: provider.name,
      run_id: request.runId,
      role: request.role,
      kind: callError.kind,
      status: callError.status,
      output_started: callError.outputStarted,
      err: callError.cause,
    };
    // An abort is the author or the run stopping, not a provider problem.
    if (callError.kind === 'aborted') logger?.debug(fields, 'model call aborted');
    else logger?.warn(fields, 'model call failed');
    request.onAttempt?.({
      index: 0,
      provider: provider.name,
      model,
      outcome: 'failed',
      usage: callError.usage ?? failedAttemptUsage(assembler, request, model, streaming),
      errorKind: callError.kind,
      ...(callError.status === undefined ? {} : { status: callError.status }),
      outputStarted: callError.outputStarted,
      durationMs: performance.now() - startedAt,
      trimmedToolResults: 0,
    });
    throw callError;
  } finally {
    clearTimeout(timer);
    if (bodyOpen) controller.abort();
    request.signal?.removeEventListener('abort', onCallerAbort);
  }
}

function buildResult(
  assembler: StreamAssembler,
  providerName: string,
  model: string,
  request: ChatRequest,
): LlmCallResult {
  const toolCalls = assembler.toolCalls();
  return {
    text: assembler.text,
    thinking: assembler.thinking,
    toolCalls,
    finishReason: assembler.finishReason ?? 'stop',
    usage: assembler.providerUsage
      ? { ...assembler.providerUsage, usage_source: 'provider' }
      : estimateUsage(assembler, request, model),
    provider: providerName,
    model: assembler.model ?? model,
    ...(assembler.firstTokenAt === undefined ? {} : { firstTokenAt: assembler.firstTokenAt }),
  };
}

/**
 * A failed stream never carries the provider's usage. A request refused before streaming (HTTP
 * error, connection failure) generated nothing, so it is recorded as zero; once the provider
 * accepted it, the prompt and whatever arrived are estimated, as it may bill them.
 */
function failedAttemptUsage(
  assembler: StreamAssembler,
  request: ChatRequest,
  model: string,
  streaming: boolean,
): TokenUsage {
  if (!streaming)
    return { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0, usage_source: 'estimate' };
  return estimateUsage(assembler, request, model);
}

function estimateUsage(assembler: StreamAssembler, request: ChatRequest, model: string): TokenUsage {
  const encoding = encodingForModel(model);
  const prompt = estimatePromptTokens(request.messages, request.tools, encoding);
  let completion =
    estimateTextTokens(assembler.text, encoding) + estimateTextTokens(assembler.thinking, encoding);
  for (const call of assembler.toolCalls()) {
    completion +=
      estimateTextTokens(call.function.name, encoding) +
      estimateTextTokens(call.function.arguments, encoding);
  }
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    usage_source: 'estimate',
  };
}

function toProviderMessages(messages: readonly ChatMessage[]): ChatCompletionMessageParam[] {
  return messages.map((message) => {
    // OpenAI rejects an empty `tool_calls` array ("[] is too short").
    if (message.role === 'assistant' && message.tool_calls?.length === 0) {
      return { role: 'assistant', content: message.content };
    }
    return message;
  });
}
