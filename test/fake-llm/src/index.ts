export type { ChatRequestBody, ChatRequestMessage } from './chat-request.ts';
export { CHAPTER_TITLE, chapterBody, OUTLINE_TITLE } from './prose.ts';
export { PROVIDER_SSE_DONE, providerSseData, providerSseEvent } from './provider-sse.ts';
export type { RecordedRequest, RequestFilter } from './request-log.ts';
export { FAKE_LLM_ROLES, ROUTER_DECISION, SUGGESTIONS } from './role-responses.ts';
export type {
  ErrorStep,
  Script,
  ScriptedToolCall,
  ScriptInput,
  ScriptMatch,
  Step,
  TextStep,
} from './script-schema.ts';
export { DEFAULT_FAKE_MODEL, type FakeLlm, type FakeLlmOptions, startFakeLlm } from './server.ts';
export { estimatePromptTokens, splitIntoTokens } from './tokenizer.ts';
