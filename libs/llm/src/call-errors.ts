import type { TokenUsage } from '@quill/contracts';
import { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from 'openai';
import { LlmCallError, type LlmCallErrorKind } from './errors.ts';
import { retryAfterMs } from './retry-after.ts';

export interface FailureContext {
  provider: string;
  outputStarted: boolean;
  reasoningStarted?: boolean;
  /** Whether the response had started streaming (a failure then interrupts the stream). */
  streaming: boolean;
  timedOut: boolean;
  callerAborted: boolean;
  /** What the attempt consumed, for its usage record. */
  usage?: TokenUsage;
}

/** Turns whatever the SDK or fetch threw into one `LlmCallError`. */
export function toLlmCallError(error: unknown, context: FailureContext): LlmCallError {
  if (error instanceof LlmCallError) return error;
  const { kind, status, providerCode } = classify(error, context);
  const retryAfter = error instanceof APIError ? retryAfterMs(error.headers, Date.now()) : undefined;
  return new LlmCallError({
    provider: context.provider,
    kind,
    outputStarted: context.outputStarted,
    reasoningStarted: context.reasoningStarted ?? false,
    ...(retryAfter === undefined ? {} : { retryAfterMs: retryAfter }),
    ...(status === undefined ? {} : { status }),
    ...(providerCode === undefined ? {} : { providerCode }),
    ...(context.usage === undefined ? {} : { usage: context.usage }),
    cause: error,
  });
}

function classify(
  error: unknown,
  context: FailureContext,
): { kind: LlmCallErrorKind; status?: number; providerCode?: string } {
  // Our own deadline and the caller's signal are checked first: the SDK reports both as aborts.
  if (context.timedOut) return { kind: 'timeout' };
  if (context.callerAborted) return { kind: 'aborted' };
  if (error instanceof APIConnectionTimeoutError) return { kind: 'timeout' };
  if (error instanceof APIUserAbortError) return { kind: 'aborted' };
  if (error instanceof APIConnectionError)
    return { kind: context.streaming ? 'stream_interrupted' : 'connection' };
  if (error instanceof APIError && error.status !== undefined) {
    return { kind: 'http', status: error.status, ...(error.code ? { providerCode: error.code } : {}) };
  }
  // Socket resets ("terminated"), malformed chunks and in-stream error events.
  if (error instanceof APIError && error.code) {
    return { kind: context.streaming ? 'stream_interrupted' : 'connection', providerCode: error.code };
  }
  return { kind: context.streaming ? 'stream_interrupted' : 'connection' };
}
