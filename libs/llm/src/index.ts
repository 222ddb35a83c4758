export {
  type Admission,
  type BreakerSettings,
  type BreakerState,
  type BreakerStatus,
  type CircuitBreaker,
  createCircuitBreaker,
  readBreakerStates,
} from './circuit-breaker.ts';
export { createLlmClient, type LlmClientOptions, type LlmTimeouts, resolveTimeouts } from './client.ts';
export { collectChat } from './collect.ts';
export {
  canFailOver,
  canRetrySameProvider,
  isProviderFailure,
  isRefusal,
  LlmCallError,
  type LlmCallErrorFields,
  type LlmCallErrorKind,
  quillErrorCodeFor,
  toQuillError,
} from './errors.ts';
export {
  createFailoverClient,
  DEFAULT_RETRY,
  type FailoverClientOptions,
  type FailoverLlmClient,
  MAX_PROVIDER_ATTEMPTS,
  type RetrySettings,
} from './failover-client.ts';
export {
  TRIMMED_NOTE_PREFIX,
  type TrimOptions,
  type TrimResult,
  trimTranscript,
} from './intra-run-trimmer.ts';
export {
  createFailoverClientFromSettings,
  type LlmSettings,
  parseRoleCaps,
  parseRoleModels,
  providersFromSettings,
} from './llm-settings.ts';
export {
  CONTINUATION_PROMPT,
  continuationMessages,
  needsContinuation,
  type TruncatedReply,
} from './output-truncation.ts';
export { createParagraphCounter } from './paragraph-counter.ts';
export { type LlmProvider, type ModelTarget, modelFor } from './provider.ts';
export {
  DEFAULT_REQUEST_OPTIONS,
  isLoopback,
  type ProviderRequestOptions,
  type RequestFields,
  requestFields,
} from './request-fields.ts';
export { retryAfterMs, sameProviderRetryDelay } from './retry-after.ts';
export { createSessionPins, type SessionPins } from './session-pin.ts';
export {
  type EncodingName,
  encodingForModel,
  estimateMessageTokens,
  estimatePromptTokens,
  estimateTextTokens,
  estimateToolsTokens,
  promptTokensUpperBound,
  warmTokenizer,
} from './token-estimate.ts';
export type {
  ChatRequest,
  FinishReason,
  LlmAttempt,
  LlmCallResult,
  LlmClient,
  LlmEvent,
  LlmLogger,
  ToolDefinition,
} from './types.ts';
