import type { TokenUsage } from '@quill/contracts';
import type { ChatCompletionChunk } from 'openai/resources/chat/completions';
import { LlmCallError, type LlmCallErrorKind } from './errors.ts';
import { StreamAssembler } from './stream-assembler.ts';
import type { ChatRequest, FinishReason, LlmAttempt, LlmCallResult, LlmClient, LlmEvent } from './types.ts';

/**
 * An in-process model for unit tests (`@quill/llm/testing`): each call plays the next scripted
 * reply as Chat Completions chunks through the same StreamAssembler the real client uses, so a
 * test sees the events and the assembled result a provider's stream would give — text and
 * reasoning deltas, tool calls whose arguments arrive split anywhere, usage only on the last
 * chunk, and failures mid-stream. Tests that need the HTTP wire use test/fake-llm instead.
 */
export type ScriptedChunk =
  | { text: string }
  | { reasoning: string }
  /** One tool-call delta: the first for an index carries id and name, the rest argument pieces. */
  | { tool: { index: number; id?: string; name?: string; arguments?: string } }
  /** The last chunk: the finish reason and, as providers send it, the usage. */
  | { finish: FinishReason; usage?: Omit<TokenUsage, 'usage_source'> }
  /** The stream fails here (after the chunks before it reached the caller). */
  | { error: { kind: LlmCallErrorKind; status?: number; providerCode?: string } };

export type ScriptedReply = readonly ScriptedChunk[];

export interface ScriptedModel extends LlmClient {
  /** Every request the model was called with, in order. */
  readonly requests: readonly ChatRequest[];
  /** Replies not played yet. */
  readonly remaining: number;
}

export interface ScriptedModelOptions {
  name?: string;
  model?: string;
  /**
   * Called before a reply plays, e.g. to stop the run mid-turn from the test. Runs after the
   * chunk at `index` (−1: before the first chunk).
   */
  onChunk?: (index: number, request: ChatRequest) => void;
}

const ZERO_USAGE = { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 };

export function createScriptedModel(
  replies: readonly ScriptedReply[],
  options: ScriptedModelOptions = {},
): ScriptedModel {
  const name = options.name ?? 'scripted';
  const model = options.model ?? 'scripted-1';
  const queue = [...replies];
  const requests: ChatRequest[] = [];

  async function* streamChat(request: ChatRequest): AsyncGenerator<LlmEvent, LlmCallResult, undefined> {
    requests.push(request);
    const reply = queue.shift();
    if (!reply) throw new Error(`scripted model: no reply left for call ${requests.length}`);
    const assembler = new StreamAssembler();
    const fail = (kind: LlmCallErrorKind, extra: { status?: number; providerCode?: string } = {}) => {
      const usage = { ...ZERO_USAGE, usage_source: 'estimate' as const };
      request.onAttempt?.(attempt('failed', usage, assembler.outputStarted, kind, extra.status));
      return new LlmCallError({
        provider: name,
        kind,
        outputStarted: assembler.outputStarted,
        usage,
        ...extra,
      });
    };
    const attempt = (
      outcome: 'ok' | 'failed',
      usage: TokenUsage,
      outputStarted: boolean,
      errorKind?: string,
      status?: number,
    ): LlmAttempt => ({
      index: 0,
      provider: name,
      model,
      outcome,
      usage,
      outputStarted,
      durationMs: 0,
      trimmedToolResults: 0,
      ...(errorKind ? { errorKind } : {}),
      ...(status === undefined ? {} : { status }),
    });
    options.onChunk?.(-1, request);
    for (const [index, chunk] of reply.entries()) {
      if (request.signal?.aborted) throw fail('aborted');
      if ('error' in chunk) throw fail(chunk.error.kind, chunk.error);
      for (const event of assembler.push(toChunk(chunk, model))) yield event;
      options.onChunk?.(index, request);
    }
    if (request.signal?.aborted) throw fail('aborted');
    if (assembler.finishReason === undefined) throw fail('stream_interrupted');
    const usage: TokenUsage = assembler.providerUsage
      ? { ...assembler.providerUsage, usage_source: 'provider' }
      : { ...ZERO_USAGE, usage_source: 'estimate' };
    const done = attempt('ok', usage, assembler.outputStarted);
    request.onAttempt?.(done);
    return {
      text: assembler.text,
      thinking: assembler.thinking,
      toolCalls: assembler.toolCalls(),
      finishReason: assembler.finishReason,
      usage,
      provider: name,
      model: assembler.model ?? model,
      failovers: 0,
      attempts: [done],
      ...(assembler.firstTokenAt === undefined ? {} : { firstTokenAt: assembler.firstTokenAt }),
    };
  }

  return {
    provider: { name, model },
    streamChat,
    get requests() {
      return requests;
    },
    get remaining() {
      return queue.length;
    },
  };
}

function toChunk(chunk: Exclude<ScriptedChunk, { error: unknown }>, model: string): ChatCompletionChunk {
  const base = { id: 'scripted', object: 'chat.completion.chunk' as const, created: 0, model };
  if ('finish' in chunk) {
    const { prompt_tokens, completion_tokens, total_tokens } = chunk.usage ?? ZERO_USAGE;
    return {
      ...base,
      choices: [{ index: 0, delta: {}, finish_reason: chunk.finish, logprobs: null }],
      ...(chunk.usage ? { usage: { prompt_tokens, completion_tokens, total_tokens } } : {}),
    };
  }
  const delta: ChatCompletionChunk.Choice.Delta & { reasoning_content?: string } =
    'text' in chunk
      ? { content: chunk.text }
      : 'reasoning' in chunk
        ? { reasoning_content: chunk.reasoning }
        : {
            tool_calls: [
              {
                index: chunk.tool.index,
                ...(chunk.tool.id ? { id: chunk.tool.id, type: 'function' as const } : {}),
                function: {
                  ...(chunk.tool.name ? { name: chunk.tool.name } : {}),
                  ...(chunk.tool.arguments === undefined ? {} : { arguments: chunk.tool.arguments }),
                },
              },
            ],
          };
  return { ...base, choices: [{ index: 0, delta, finish_reason: null, logprobs: null }] };
}

/** Text cut into pieces at the given offsets (a delta boundary may fall inside a tag). */
export function splitAt(text: string, offsets: readonly number[]): string[] {
  const cuts = [...new Set(offsets.filter((at) => at > 0 && at < text.length))].sort((a, b) => a - b);
  const pieces: string[] = [];
  let from = 0;
  for (const cut of [...cuts, text.length]) {
    pieces.push(text.slice(from, cut));
    from = cut;
  }
  return pieces.filter((piece) => piece !== '');
}

/** A plain reply: the text in deltas cut at `offsets`, then `stop` (or the given finish). */
export function textReply(
  text: string,
  options: {
    offsets?: readonly number[];
    finish?: FinishReason;
    usage?: Omit<TokenUsage, 'usage_source'>;
  } = {},
): ScriptedReply {
  return [
    ...splitAt(text, options.offsets ?? []).map((piece) => ({ text: piece })),
    {
      finish: options.finish ?? 'stop',
      usage: options.usage ?? { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
    },
  ];
}

/** One tool call as deltas: id and name first, the JSON arguments cut at `offsets`. */
export function toolCallChunks(
  index: number,
  call: { id: string; name: string; arguments: unknown },
  offsets: readonly number[] = [],
): ScriptedChunk[] {
  const json = JSON.stringify(call.arguments);
  return [
    { tool: { index, id: call.id, name: call.name } },
    ...splitAt(json, offsets).map((piece) => ({ tool: { index, arguments: piece } })),
  ];
}

/** A reply that calls tools (after optional text), finishing with `tool_calls`. */
export function toolReply(
  calls: readonly { id: string; name: string; arguments: unknown }[],
  options: { text?: string; offsets?: readonly number[] } = {},
): ScriptedReply {
  return [
    ...(options.text ? [{ text: options.text }] : []),
    ...calls.flatMap((call, index) => toolCallChunks(index, call, options.offsets)),
    { finish: 'tool_calls', usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 } },
  ];
}
