export { createLlmClient, type LlmClientOptions } from './client.ts';
export { collectChat } from './collect.ts';
export {
  LlmCallError,
  type LlmCallErrorFields,
  type LlmCallErrorKind,
  quillErrorCodeFor,
  toQuillError,
} from './errors.ts';
export type { LlmProvider } from './provider.ts';
export { estimatePromptTokens, estimateTextTokens } from './token-estimate.ts';
export type {
  ChatRequest,
  FinishReason,
  LlmCallResult,
  LlmClient,
  LlmEvent,
  LlmLogger,
  ToolDefinition,
} from './types.ts';
