import type { ChatMessage, TokenUsage, ToolCall } from '@quill/contracts';

/** A function tool in the OpenAI Chat Completions shape (`parameters` is a JSON schema). */
export interface ToolDefinition {
  type: 'function';
  function: {
    name: string;
    description?: string;
    parameters: Record<string, unknown>;
    strict?: boolean;
  };
}

export interface ChatRequest {
  messages: ChatMessage[];
  tools?: ToolDefinition[];
  /** Sent as `x-quill-role` so proxies and the test double can tell calls apart. */
  role: string;
  /** Sent as `x-quill-run-id`. */
  runId: string;
  signal?: AbortSignal;
}

export type LlmEvent =
  | { type: 'text'; delta: string }
  | { type: 'thinking'; delta: string }
  | { type: 'tool_call_started'; index: number; id: string; name: string };

export type FinishReason = 'stop' | 'length' | 'tool_calls' | 'content_filter' | 'function_call';

export interface LlmCallResult {
  text: string;
  /** Reasoning text (`reasoning_content`) when the provider streams it; '' otherwise. */
  thinking: string;
  toolCalls: ToolCall[];
  finishReason: FinishReason;
  usage: TokenUsage;
  provider: string;
  model: string;
  /** ms since the epoch (sub-ms precision) of the first text, thinking or tool-call delta. */
  firstTokenAt?: number;
}

export interface LlmClient {
  readonly provider: { readonly name: string; readonly model: string };
  /**
   * Streams one model call: yields events while the provider streams, returns the assembled
   * result when it finishes, throws `LlmCallError` otherwise.
   */
  streamChat(request: ChatRequest): AsyncGenerator<LlmEvent, LlmCallResult, undefined>;
}

/** The structural subset of a pino logger this lib writes to. */
export interface LlmLogger {
  debug(fields: Record<string, unknown>, message: string): void;
  warn(fields: Record<string, unknown>, message: string): void;
}
