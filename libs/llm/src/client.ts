import type { ChatMessage, TokenUsage } from '@quill/contracts';
import OpenAI from 'openai';
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import { toLlmCallError } from './call-errors.ts';
import { LlmCallError } from './errors.ts';
import type { LlmProvider } from './provider.ts';
import { StreamAssembler } from './stream-assembler.ts';
import { estimatePromptTokens, estimateTextTokens } from './token-estimate.ts';
import type { ChatRequest, LlmCallResult, LlmClient, LlmEvent, LlmLogger } from './types.ts';

export interface LlmClientOptions {
  provider: LlmProvider;
  /**
   * Longest silence tolerated, in ms: waiting for the response headers, then between two
   * chunks. Not a cap on the whole call: a long chapter may stream for minutes.
   */
  timeoutMs: number;
  logger?: LlmLogger;
  /** SDK retries of a request that failed before streaming; default 0, as failover decides. */
  maxRetries?: number;
}

export function createLlmClient(options: LlmClientOptions): LlmClient {
  const openai = new OpenAI({
    baseURL: options.provider.baseUrl,
    apiKey: options.provider.apiKey,
    maxRetries: options.maxRetries ?? 0,
    timeout: options.timeoutMs,
  });
  return {
    provider: { name: options.provider.name, model: options.provider.model },
    streamChat: (request) => streamChat(openai, options, request),
  };
}

async function* streamChat(
  openai: OpenAI,
  options: LlmClientOptions,
  request: ChatRequest,
): AsyncGenerator<LlmEvent, LlmCallResult, undefined> {
  const { provider, logger } = options;
  const deadline = new AbortController();
  const timer = setTimeout(() => deadline.abort(new Error('model call idle timeout')), options.timeoutMs);
  const signal = request.signal ? AbortSignal.any([request.signal, deadline.signal]) : deadline.signal;
  const assembler = new StreamAssembler();
  let streaming = false;
  const failure = (error: unknown): LlmCallError =>
    toLlmCallError(error, {
      provider: provider.name,
      outputStarted: assembler.outputStarted,
      streaming,
      timedOut: deadline.signal.aborted,
      callerAborted: request.signal?.aborted === true,
    });

  try {
    try {
      const stream = await openai.chat.completions.create(
        {
          model: provider.model,
          messages: toProviderMessages(request.messages),
          ...(request.tools && request.tools.length > 0 ? { tools: request.tools } : {}),
          stream: true,
          stream_options: { include_usage: true },
        },
        { signal, headers: { 'x-quill-role': request.role, 'x-quill-run-id': request.runId } },
      );
      streaming = true;
      timer.refresh();
      for await (const chunk of stream) {
        timer.refresh();
        for (const event of assembler.push(chunk)) yield event;
      }
    } catch (error) {
      throw failure(error);
    }
    // The SDK ends the iteration quietly when its signal aborts, so check it ourselves.
    if (signal.aborted) throw failure(signal.reason);
    if (assembler.finishReason === undefined)
      throw failure(new Error('stream ended without a finish_reason'));
    const result = buildResult(assembler, options.provider, request);
    logger?.debug(
      { provider: provider.name, run_id: request.runId, role: request.role, usage: result.usage },
      'model call finished',
    );
    return result;
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
    throw callError;
  } finally {
    clearTimeout(timer);
  }
}

function buildResult(assembler: StreamAssembler, provider: LlmProvider, request: ChatRequest): LlmCallResult {
  const toolCalls = assembler.toolCalls();
  return {
    text: assembler.text,
    thinking: assembler.thinking,
    toolCalls,
    finishReason: assembler.finishReason ?? 'stop',
    usage: assembler.providerUsage
      ? { ...assembler.providerUsage, usage_source: 'provider' }
      : estimateUsage(assembler, toolCalls, request),
    provider: provider.name,
    model: assembler.model ?? provider.model,
    ...(assembler.firstTokenAt === undefined ? {} : { firstTokenAt: assembler.firstTokenAt }),
  };
}

function estimateUsage(
  assembler: StreamAssembler,
  toolCalls: LlmCallResult['toolCalls'],
  request: ChatRequest,
): TokenUsage {
  const prompt = estimatePromptTokens(request.messages, request.tools);
  let completion = estimateTextTokens(assembler.text) + estimateTextTokens(assembler.thinking);
  for (const call of toolCalls) {
    completion += estimateTextTokens(call.function.name) + estimateTextTokens(call.function.arguments);
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
