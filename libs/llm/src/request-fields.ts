import { createHash } from 'node:crypto';
import type { LlmProvider } from './provider.ts';
import type { ChatRequest } from './types.ts';

/**
 * What a provider accepts beyond the messages (docs/agent-behaviour.md "Provider requests").
 * Classic Chat Completions fields (`max_tokens`, `user`) work on every compatible server; the
 * newer OpenAI ones (`max_completion_tokens`, `safety_identifier`, `prompt_cache_key`) are opt-in.
 */
export interface ProviderRequestOptions {
  /** The field the role's output cap goes in; `none` sends no cap. */
  outputTokensField: 'max_tokens' | 'max_completion_tokens' | 'none';
  /** The field the session's stable end-user identifier goes in; `none` sends none. */
  userField: 'user' | 'safety_identifier' | 'none';
  /** Sends `prompt_cache_key` per session and role, so one conversation's calls share a cache. */
  promptCacheKey: boolean;
  /**
   * Sends `x-quill-role` / `x-quill-run-id`, which tell a third party about our internals: for
   * our own proxies and the test double only. `auto`: only to a loopback address (a process on
   * this machine: the fake LLM, a local proxy), never to a remote host.
   */
  quillHeaders: boolean | 'auto';
}

export const DEFAULT_REQUEST_OPTIONS: ProviderRequestOptions = {
  outputTokensField: 'max_tokens',
  userField: 'user',
  promptCacheKey: false,
  quillHeaders: 'auto',
};

export interface RequestFields {
  body: {
    max_tokens?: number;
    max_completion_tokens?: number;
    user?: string;
    safety_identifier?: string;
    prompt_cache_key?: string;
  };
  headers: Record<string, string>;
}

/** The body fields and headers one call to `provider` carries besides model, messages and tools. */
export function requestFields(
  provider: LlmProvider,
  request: Pick<ChatRequest, 'role' | 'runId' | 'sessionId' | 'maxOutputTokens'>,
): RequestFields {
  const options = { ...DEFAULT_REQUEST_OPTIONS, ...provider.request };
  const body: RequestFields['body'] = {};
  const cap =
    request.maxOutputTokens ?? provider.roleMaxOutputTokens?.[request.role] ?? provider.maxOutputTokens;
  if (cap !== undefined && options.outputTokensField !== 'none') body[options.outputTokensField] = cap;
  if (request.sessionId !== undefined) {
    // Hashed: the provider sees a stable, opaque id, never our session ids.
    if (options.userField !== 'none') body[options.userField] = opaqueId('user', request.sessionId);
    if (options.promptCacheKey) {
      body.prompt_cache_key = opaqueId('cache', `${request.sessionId}:${request.role}`);
    }
  }
  const sendHeaders = options.quillHeaders === 'auto' ? isLoopback(provider.baseUrl) : options.quillHeaders;
  const headers: Record<string, string> = sendHeaders
    ? { 'x-quill-role': request.role, 'x-quill-run-id': request.runId }
    : {};
  return { body, headers };
}

function opaqueId(purpose: string, value: string): string {
  return `quill-${createHash('sha256').update(`${purpose}:${value}`).digest('hex').slice(0, 32)}`;
}

export function isLoopback(baseUrl: string): boolean {
  let host: string;
  try {
    host = new URL(baseUrl).hostname;
  } catch {
    return false;
  }
  return host === 'localhost' || host === '[::1]' || /^127(\.\d{1,3}){3}$/.test(host);
}
