import type { ChatMessage, TokenUsage, ToolCall } from '@quill/contracts';
import type { FirstAdmission } from './circuit-breaker.ts';
import type { ModelTarget } from './provider.ts';

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
  /** Pins the session to the provider that last served it (failover client only). */
  sessionId?: string;
  /** Overrides the provider's model for this call (the failover client sets it per role). */
  model?: string;
  /**
   * The role's model per provider name, from the session's pinned role definition (docs/kernel.md
   * "Definitions and pinning"); a provider it does not name uses its own configured model.
   */
  targets?: Readonly<Record<string, ModelTarget>>;
  /** The output cap from the pinned role definition; unset: the provider's configured cap. */
  maxOutputTokens?: number;
  /**
   * Accounting hook: called once per provider attempt, failed ones included, before the call
   * returns or throws, so every attempt gets its usage record (docs/agent-behaviour.md `usage_hooks`).
   */
  onAttempt?: (attempt: LlmAttempt) => void;
  signal?: AbortSignal;
  /**
   * The failover client's first admission for this call (the session's pin and its provider's
   * breaker), read ahead with `readAdmission` while the caller waited for something else; unset,
   * the call reads it itself. Only for a call of the session it was read for.
   */
  admission?: Promise<FirstAdmission>;
}

/** One request to one provider within a model call. */
export interface LlmAttempt {
  /** 0 for the first provider tried, 1 after a failover. */
  index: number;
  provider: string;
  model: string;
  outcome: 'ok' | 'failed';
  /** Provider-reported when it sent usage; otherwise estimated (`usage_source: "estimate"`). */
  usage: TokenUsage;
  /** Failure kind and HTTP status for a failed attempt. */
  errorKind?: string;
  status?: number;
  outputStarted: boolean;
  durationMs: number;
  /** Tool results the intra-run trimmer shortened to fit this provider's window. */
  trimmedToolResults: number;
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
  /** Provider switches during this call (0 or 1); the failover client sets it, for the run meter. */
  failovers?: number;
  /** Every provider attempt of this call, in order (failover client only). */
  attempts?: LlmAttempt[];
}

export interface LlmClient {
  readonly provider: { readonly name: string; readonly model: string };
  /**
   * Streams one model call: yields events while the provider streams, returns the assembled
   * result when it finishes, throws `LlmCallError` otherwise.
   */
  streamChat(request: ChatRequest): AsyncGenerator<LlmEvent, LlmCallResult, undefined>;
  /**
   * Reads now what a call of this session opens with (its pin and that provider's breaker), for
   * the caller to hand to that call as `ChatRequest.admission`: one round trip taken alongside
   * the caller's own instead of after it. Never rejects (Redis unreachable reads as closed). Only
   * the failover client has it; a half-open probe read ahead and never used holds the probe for
   * its lease (`probeLeaseMs`), as a probe whose call died would.
   */
  readAdmission?(sessionId: string): Promise<FirstAdmission>;
}

/** The structural subset of a pino logger this lib writes to. */
export interface LlmLogger {
  debug(fields: Record<string, unknown>, message: string): void;
  warn(fields: Record<string, unknown>, message: string): void;
}
