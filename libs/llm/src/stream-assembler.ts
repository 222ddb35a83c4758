import { randomUUID } from 'node:crypto';
import type { TokenUsage, ToolCall } from '@quill/contracts';
import type { ChatCompletionChunk } from 'openai/resources/chat/completions';
import { TextAccumulator } from './text-accumulator.ts';
import type { FinishReason, LlmEvent } from './types.ts';

interface PartialToolCall {
  id: string;
  name: string;
  arguments: string;
  announced: boolean;
}

/** Usage as the provider reported it (before we mark its source). */
type ProviderUsage = Omit<TokenUsage, 'usage_source'>;

/**
 * Folds `chat.completion.chunk`s into events for the caller and the final assembled reply.
 * Pure (no I/O) so the delta handling can be reasoned about apart from transport failures.
 */
export class StreamAssembler {
  // A delta per token for the whole reply: kept flat (TextAccumulator).
  readonly #text = new TextAccumulator();
  readonly #thinking = new TextAccumulator();
  finishReason: FinishReason | undefined;
  /** Undefined until the provider's final usage chunk arrives (absent on some providers). */
  providerUsage: ProviderUsage | undefined;
  firstTokenAt: number | undefined;
  /** The model the provider says answered (may be a dated variant of the configured one). */
  model: string | undefined;
  readonly #toolCalls: PartialToolCall[] = [];

  /** Any delta arrived (reasoning included): the first-token deadline is met. */
  get anyDelta(): boolean {
    return this.firstTokenAt !== undefined;
  }

  /** Real output arrived: a text or tool-call delta (reasoning alone is not, see errors.ts). */
  outputStarted = false;

  get reasoningStarted(): boolean {
    return this.#thinking.length > 0;
  }

  get text(): string {
    return this.#text.toString();
  }

  get thinking(): string {
    return this.#thinking.toString();
  }

  push(chunk: ChatCompletionChunk): LlmEvent[] {
    if (chunk.model) this.model = chunk.model;
    if (chunk.usage) {
      const { prompt_tokens, completion_tokens, total_tokens } = chunk.usage;
      this.providerUsage = { prompt_tokens, completion_tokens, total_tokens };
    }
    const choice = chunk.choices[0];
    if (!choice) return [];
    const events: LlmEvent[] = [];
    // Not in the OpenAI types: DeepSeek, Qwen and vLLM stream reasoning as `reasoning_content`,
    // OpenRouter and Ollama as `reasoning`.
    const extra = choice.delta as { reasoning_content?: string | null; reasoning?: string | null };
    const reasoning = extra.reasoning_content || extra.reasoning;
    if (reasoning) {
      this.#thinking.append(reasoning);
      events.push({ type: 'thinking', delta: reasoning });
    }
    if (choice.delta.content) {
      this.outputStarted = true;
      this.#text.append(choice.delta.content);
      events.push({ type: 'text', delta: choice.delta.content });
    }
    for (const delta of choice.delta.tool_calls ?? []) {
      this.outputStarted = true;
      const event = this.#pushToolCallDelta(delta);
      if (event) events.push(event);
    }
    if (choice.finish_reason) this.finishReason = choice.finish_reason;
    if (events.length > 0 && this.firstTokenAt === undefined) {
      this.firstTokenAt = performance.timeOrigin + performance.now();
    }
    return events;
  }

  toolCalls(): ToolCall[] {
    return this.#toolCalls
      .filter((call) => call !== undefined)
      .map((call) => ({
        id: call.id,
        type: 'function' as const,
        function: { name: call.name, arguments: call.arguments },
      }));
  }

  #pushToolCallDelta(delta: ChatCompletionChunk.Choice.Delta.ToolCall): LlmEvent | undefined {
    let call = this.#toolCalls[delta.index];
    if (call === undefined) {
      call = { id: '', name: '', arguments: '', announced: false };
      this.#toolCalls[delta.index] = call;
    }
    if (delta.id) call.id = delta.id;
    // Some compatible servers repeat the name on every delta; it is never split, so keep the first.
    if (delta.function?.name && call.name === '') call.name = delta.function.name;
    call.arguments += delta.function?.arguments ?? '';
    if (call.announced || call.name === '') return undefined;
    call.announced = true;
    // A tool result must answer an id; invent one for servers that omit it.
    if (call.id === '') call.id = `call_${randomUUID()}`;
    return { type: 'tool_call_started', index: delta.index, id: call.id, name: call.name };
  }
}
