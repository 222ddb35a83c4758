import { QuillError, type TokenUsage } from '@quill/contracts';

/** `circuit_open`: no request was sent because every usable provider's breaker is open. */
export type LlmCallErrorKind =
  | 'connection'
  | 'http'
  | 'timeout'
  | 'aborted'
  | 'stream_interrupted'
  | 'circuit_open';

export interface LlmCallErrorFields {
  provider: string;
  kind: LlmCallErrorKind;
  /** Whether any text, thinking or tool-call delta reached the caller before the failure. */
  outputStarted: boolean;
  status?: number;
  /** The provider's error code when it sent one, e.g. `context_length_exceeded`. */
  providerCode?: string;
  /** What the failed attempt consumed (estimated: providers send no usage for a failed stream). */
  usage?: TokenUsage;
  cause?: unknown;
}

/**
 * A failed model call. Failover reads `outputStarted`: switching providers is only safe while the
 * author has seen nothing from this call.
 */
export class LlmCallError extends Error {
  readonly provider: string;
  readonly kind: LlmCallErrorKind;
  readonly outputStarted: boolean;
  readonly status: number | undefined;
  readonly providerCode: string | undefined;
  readonly usage: TokenUsage | undefined;

  constructor(fields: LlmCallErrorFields) {
    const status = fields.status === undefined ? '' : ` ${fields.status}`;
    super(`model call to ${fields.provider} failed: ${fields.kind}${status}`, { cause: fields.cause });
    this.name = new.target.name;
    this.provider = fields.provider;
    this.kind = fields.kind;
    this.outputStarted = fields.outputStarted;
    this.status = fields.status;
    this.providerCode = fields.providerCode;
    this.usage = fields.usage;
  }
}

// Statuses that say "this provider cannot serve now", as opposed to "this request is wrong".
const UNAVAILABLE_STATUSES = new Set([408, 429, 500, 502, 503, 504, 529]);

/** `model_unavailable` when the provider could not serve at all, `model_error` otherwise. */
export function quillErrorCodeFor(error: LlmCallError): 'model_error' | 'model_unavailable' {
  if (error.kind === 'connection' || error.kind === 'timeout' || error.kind === 'circuit_open') {
    return 'model_unavailable';
  }
  if (error.kind === 'http' && error.status !== undefined && UNAVAILABLE_STATUSES.has(error.status)) {
    return 'model_unavailable';
  }
  return 'model_error';
}

/**
 * Whether the failure says the provider could not serve (down, overloaded, silent), as opposed
 * to the request being wrong or the caller stopping. Such failures trip the circuit breaker and,
 * before any output, justify trying the other provider (docs/agent-behaviour.md `llm_failover`).
 */
export function isProviderFailure(error: LlmCallError): boolean {
  if (error.kind === 'connection' || error.kind === 'timeout' || error.kind === 'stream_interrupted') {
    return true;
  }
  if (error.kind !== 'http' || error.status === undefined) return false;
  return error.status >= 500 || UNAVAILABLE_STATUSES.has(error.status);
}

/** Switching is only safe while the author has seen nothing of this call. */
export function canFailOver(error: LlmCallError): boolean {
  return !error.outputStarted && isProviderFailure(error);
}

export function toQuillError(error: LlmCallError): QuillError {
  return new QuillError(quillErrorCodeFor(error), {
    cause: error,
    details: {
      provider: error.provider,
      kind: error.kind,
      status: error.status,
      provider_code: error.providerCode,
      output_started: error.outputStarted,
    },
  });
}
