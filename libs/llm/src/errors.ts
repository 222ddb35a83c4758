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
  /**
   * Whether real output (a text or tool-call delta) reached the caller before the failure.
   * Reasoning alone is not: the author has nothing of the answer yet (docs/agent-behaviour.md
   * `llm_failover`), so a stream cut during reasoning may still go to another attempt.
   */
  outputStarted: boolean;
  /** Whether reasoning deltas reached the caller before the failure. */
  reasoningStarted?: boolean;
  /** The wait the provider asked for (`retry-after`, `retry-after-ms`), in ms. */
  retryAfterMs?: number;
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
  readonly reasoningStarted: boolean;
  readonly retryAfterMs: number | undefined;

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
    this.reasoningStarted = fields.reasoningStarted ?? false;
    this.retryAfterMs = fields.retryAfterMs;
  }
}

// Statuses that say "this provider cannot serve now", as opposed to "this request is wrong".
const UNAVAILABLE_STATUSES = new Set([408, 429, 500, 502, 503, 504, 529]);
// "This provider will not serve us": a revoked key, an account out of credit, a key without
// access. The request is fine and another provider can serve it; retrying this one cannot help.
const REFUSED_STATUSES = new Set([401, 402, 403]);

/** `model_unavailable` when the provider could not serve at all, `model_error` otherwise. */
export function quillErrorCodeFor(error: LlmCallError): 'model_error' | 'model_unavailable' {
  if (error.kind === 'connection' || error.kind === 'timeout' || error.kind === 'circuit_open') {
    return 'model_unavailable';
  }
  if (
    error.kind === 'http' &&
    error.status !== undefined &&
    (UNAVAILABLE_STATUSES.has(error.status) || REFUSED_STATUSES.has(error.status))
  ) {
    return 'model_unavailable';
  }
  return 'model_error';
}

/**
 * Whether the failure says the provider could not or would not serve (down, overloaded, silent,
 * refusing our key), as opposed to the request being wrong or the caller stopping. Such
 * failures trip the circuit breaker and, before any output, justify trying the other provider
 * (docs/agent-behaviour.md `llm_failover`).
 */
export function isProviderFailure(error: LlmCallError): boolean {
  return isTransientFailure(error) || isRefusal(error);
}

/** A 401, 402 or 403: the provider refuses this key, whatever the request. */
export function isRefusal(error: LlmCallError): boolean {
  return error.kind === 'http' && error.status !== undefined && REFUSED_STATUSES.has(error.status);
}

function isTransientFailure(error: LlmCallError): boolean {
  if (error.kind === 'connection' || error.kind === 'timeout' || error.kind === 'stream_interrupted') {
    return true;
  }
  if (error.kind !== 'http' || error.status === undefined) return false;
  return error.status >= 500 || UNAVAILABLE_STATUSES.has(error.status);
}

/** Switching is only safe while the author has seen no real output of this call. */
export function canFailOver(error: LlmCallError): boolean {
  return !error.outputStarted && isProviderFailure(error);
}

/**
 * Asking the same provider again only helps for a failure that may pass (overload, outage, a
 * cut stream); a refused key stays refused.
 */
export function canRetrySameProvider(error: LlmCallError): boolean {
  return !error.outputStarted && isTransientFailure(error);
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
