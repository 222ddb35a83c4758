import type { RedisClient, RedisKeys } from '@quill/redis';
import { createFailoverClient, DEFAULT_RETRY, type FailoverLlmClient } from './failover-client.ts';
import type { LlmProvider, ModelTarget } from './provider.ts';
import type { ProviderRequestOptions } from './request-fields.ts';
import type { LlmLogger } from './types.ts';

/** The model settings as `loadConfig()` returns them (structural, so this lib needs no config import). */
export interface LlmSettings {
  LLM_PRIMARY_BASE_URL: string;
  LLM_PRIMARY_API_KEY: string;
  LLM_PRIMARY_MODEL: string;
  LLM_PRIMARY_MAX_INPUT_TOKENS?: number | undefined;
  LLM_BACKUP_BASE_URL?: string | undefined;
  LLM_BACKUP_API_KEY?: string | undefined;
  LLM_BACKUP_MODEL?: string | undefined;
  LLM_BACKUP_MAX_INPUT_TOKENS?: number | undefined;
  LLM_MAX_INPUT_TOKENS: number;
  LLM_ROLE_MODEL_OVERRIDES?: string | undefined;
  LLM_BACKUP_ROLE_MODEL_OVERRIDES?: string | undefined;
  LLM_CONNECT_TIMEOUT_S: number;
  LLM_FIRST_TOKEN_TIMEOUT_S: number;
  LLM_REQUEST_TIMEOUT_S: number;
  LLM_BREAKER_FAILURE_THRESHOLD: number;
  LLM_BREAKER_WINDOW_S: number;
  LLM_BREAKER_COOLDOWN_S: number;
  LLM_PIN_TTL_S: number;
  LLM_RETRY_DELAY_MS?: number;
  LLM_RETRY_AFTER_MAX_S?: number;
  LLM_MAX_OUTPUT_TOKENS?: number | undefined;
  LLM_ROLE_MAX_OUTPUT_TOKENS?: string | undefined;
  LLM_PRIMARY_OUTPUT_TOKENS_FIELD?: ProviderRequestOptions['outputTokensField'];
  LLM_BACKUP_OUTPUT_TOKENS_FIELD?: ProviderRequestOptions['outputTokensField'];
  LLM_PRIMARY_USER_FIELD?: ProviderRequestOptions['userField'];
  LLM_BACKUP_USER_FIELD?: ProviderRequestOptions['userField'];
  LLM_PRIMARY_PROMPT_CACHE_KEY?: boolean;
  LLM_BACKUP_PROMPT_CACHE_KEY?: boolean;
  LLM_PRIMARY_QUILL_HEADERS?: ProviderRequestOptions['quillHeaders'];
  LLM_BACKUP_QUILL_HEADERS?: ProviderRequestOptions['quillHeaders'];
}

/** The primary, then the backup when `LLM_BACKUP_BASE_URL` is set. */
export function providersFromSettings(settings: LlmSettings): LlmProvider[] {
  const primaryWindow = settings.LLM_PRIMARY_MAX_INPUT_TOKENS ?? settings.LLM_MAX_INPUT_TOKENS;
  const output = {
    ...(settings.LLM_MAX_OUTPUT_TOKENS === undefined
      ? {}
      : { maxOutputTokens: settings.LLM_MAX_OUTPUT_TOKENS }),
    roleMaxOutputTokens: parseRoleCaps(settings.LLM_ROLE_MAX_OUTPUT_TOKENS),
  };
  const providers: LlmProvider[] = [
    {
      name: 'primary',
      baseUrl: settings.LLM_PRIMARY_BASE_URL,
      apiKey: settings.LLM_PRIMARY_API_KEY,
      model: settings.LLM_PRIMARY_MODEL,
      maxInputTokens: primaryWindow,
      roleModels: parseRoleModels(
        settings.LLM_ROLE_MODEL_OVERRIDES,
        primaryWindow,
        'LLM_ROLE_MODEL_OVERRIDES',
      ),
      ...output,
      request: requestOptions(
        settings.LLM_PRIMARY_OUTPUT_TOKENS_FIELD,
        settings.LLM_PRIMARY_USER_FIELD,
        settings.LLM_PRIMARY_PROMPT_CACHE_KEY,
        settings.LLM_PRIMARY_QUILL_HEADERS,
      ),
    },
  ];
  if (settings.LLM_BACKUP_BASE_URL) {
    const backupWindow = settings.LLM_BACKUP_MAX_INPUT_TOKENS ?? settings.LLM_MAX_INPUT_TOKENS;
    providers.push({
      name: 'backup',
      baseUrl: settings.LLM_BACKUP_BASE_URL,
      // Never fall back to the primary's key: it would be sent to another company's endpoint.
      apiKey: settings.LLM_BACKUP_API_KEY ?? 'no-key',
      model: settings.LLM_BACKUP_MODEL ?? settings.LLM_PRIMARY_MODEL,
      maxInputTokens: backupWindow,
      roleModels: parseRoleModels(
        settings.LLM_BACKUP_ROLE_MODEL_OVERRIDES,
        backupWindow,
        'LLM_BACKUP_ROLE_MODEL_OVERRIDES',
      ),
      ...output,
      request: requestOptions(
        settings.LLM_BACKUP_OUTPUT_TOKENS_FIELD,
        settings.LLM_BACKUP_USER_FIELD,
        settings.LLM_BACKUP_PROMPT_CACHE_KEY,
        settings.LLM_BACKUP_QUILL_HEADERS,
      ),
    });
  }
  return providers;
}

function requestOptions(
  outputTokensField: ProviderRequestOptions['outputTokensField'] | undefined,
  userField: ProviderRequestOptions['userField'] | undefined,
  promptCacheKey: boolean | undefined,
  quillHeaders: ProviderRequestOptions['quillHeaders'] | undefined,
): Partial<ProviderRequestOptions> {
  return {
    ...(outputTokensField === undefined ? {} : { outputTokensField }),
    ...(userField === undefined ? {} : { userField }),
    ...(promptCacheKey === undefined ? {} : { promptCacheKey }),
    ...(quillHeaders === undefined ? {} : { quillHeaders }),
  };
}

/** `router=1024,suggest=512`: an output cap per role. */
export function parseRoleCaps(value: string | undefined): Record<string, number> {
  const caps: Record<string, number> = {};
  for (const entry of (value ?? '').split(',')) {
    if (entry.trim() === '') continue;
    const match = /^\s*([a-z_]+)\s*=\s*(\d+)\s*$/.exec(entry);
    if (!match || Number(match[2]) < 1) {
      throw new Error(`LLM_ROLE_MAX_OUTPUT_TOKENS: expected role=tokens, got "${entry}"`);
    }
    caps[match[1]!] = Number(match[2]);
  }
  return caps;
}

/**
 * `router=gpt-4o-mini,suggest=qwen2.5:7b@32000`: a model per role, optionally with its own
 * context window after `@` (else the provider's). Model names may contain `:` and `/`.
 */
export function parseRoleModels(
  value: string | undefined,
  defaultWindow: number,
  settingName = 'role model overrides',
): Record<string, ModelTarget> {
  const models: Record<string, ModelTarget> = {};
  for (const entry of (value ?? '').split(',')) {
    if (entry.trim() === '') continue;
    const match = /^\s*([a-z_]+)\s*=\s*([^\s@,=]+)(?:@(\d+))?\s*$/.exec(entry);
    if (!match) throw new Error(`${settingName}: expected role=model[@max_input_tokens], got "${entry}"`);
    models[match[1]!] = {
      model: match[2]!,
      maxInputTokens: match[3] === undefined ? defaultWindow : Number(match[3]),
    };
  }
  return models;
}

export function createFailoverClientFromSettings(
  settings: LlmSettings,
  dependencies: { redis: RedisClient; keys: RedisKeys; logger?: LlmLogger },
): FailoverLlmClient {
  const timeouts = {
    connectMs: settings.LLM_CONNECT_TIMEOUT_S * 1000,
    firstTokenMs: settings.LLM_FIRST_TOKEN_TIMEOUT_S * 1000,
    idleMs: settings.LLM_REQUEST_TIMEOUT_S * 1000,
  };
  const providers = providersFromSettings(settings);
  return createFailoverClient({
    providers,
    redis: dependencies.redis,
    keys: dependencies.keys,
    timeouts,
    breaker: {
      failureThreshold: settings.LLM_BREAKER_FAILURE_THRESHOLD,
      windowMs: settings.LLM_BREAKER_WINDOW_S * 1000,
      cooldownMs: settings.LLM_BREAKER_COOLDOWN_S * 1000,
      // By then a probe has either produced a first token or failed.
      probeLeaseMs: timeouts.connectMs + timeouts.firstTokenMs,
    },
    pinTtlMs: settings.LLM_PIN_TTL_S * 1000,
    retry: {
      defaultMs: settings.LLM_RETRY_DELAY_MS ?? DEFAULT_RETRY.defaultMs,
      capMs:
        settings.LLM_RETRY_AFTER_MAX_S === undefined
          ? DEFAULT_RETRY.capMs
          : settings.LLM_RETRY_AFTER_MAX_S * 1000,
    },
    ...(dependencies.logger ? { logger: dependencies.logger } : {}),
  });
}
