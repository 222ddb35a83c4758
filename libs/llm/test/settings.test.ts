import { describe, expect, it } from 'vitest';
import { CONTINUATION_PROMPT, continuationMessages, needsContinuation } from '../src/index.ts';
import {
  type LlmSettings,
  parseRoleCaps,
  parseRoleModels,
  providersFromSettings,
} from '../src/llm-settings.ts';
import { modelFor } from '../src/provider.ts';
import { retryAfterMs, sameProviderRetryDelay } from '../src/retry-after.ts';
import { encodingForModel } from '../src/token-estimate.ts';

const base: LlmSettings = {
  LLM_PRIMARY_BASE_URL: 'https://api.openai.com/v1',
  LLM_PRIMARY_API_KEY: 'sk-primary',
  LLM_PRIMARY_MODEL: 'gpt-4o',
  LLM_MAX_INPUT_TOKENS: 128_000,
  LLM_CONNECT_TIMEOUT_S: 10,
  LLM_FIRST_TOKEN_TIMEOUT_S: 60,
  LLM_REQUEST_TIMEOUT_S: 120,
  LLM_BREAKER_FAILURE_THRESHOLD: 5,
  LLM_BREAKER_WINDOW_S: 30,
  LLM_BREAKER_COOLDOWN_S: 30,
  LLM_PIN_TTL_S: 1800,
};

describe('providers from settings', () => {
  it('is the primary alone without LLM_BACKUP_BASE_URL, with the default window', () => {
    const providers = providersFromSettings(base);
    expect(providers).toHaveLength(1);
    expect(providers[0]).toMatchObject({ name: 'primary', model: 'gpt-4o', maxInputTokens: 128_000 });
  });

  it('adds the backup with its own window, key and role models; never reuses the primary key', () => {
    const providers = providersFromSettings({
      ...base,
      LLM_PRIMARY_MAX_INPUT_TOKENS: 120_000,
      LLM_BACKUP_BASE_URL: 'https://api.deepseek.com/v1',
      LLM_BACKUP_MODEL: 'deepseek-chat',
      LLM_BACKUP_MAX_INPUT_TOKENS: 60_000,
      LLM_ROLE_MODEL_OVERRIDES: 'router=gpt-4o-mini, suggest=gpt-4o-mini@16000',
      LLM_BACKUP_ROLE_MODEL_OVERRIDES: 'router=deepseek-chat',
    });
    expect(providers.map((provider) => provider.name)).toEqual(['primary', 'backup']);
    const [primary, backup] = providers;
    expect(primary!.maxInputTokens).toBe(120_000);
    expect(backup).toMatchObject({ model: 'deepseek-chat', maxInputTokens: 60_000, apiKey: 'no-key' });
    // Every model path carries a context window (docs/agent-behaviour.md 坑 2).
    expect(modelFor(primary!, 'router')).toEqual({ model: 'gpt-4o-mini', maxInputTokens: 120_000 });
    expect(modelFor(primary!, 'suggest')).toEqual({ model: 'gpt-4o-mini', maxInputTokens: 16_000 });
    expect(modelFor(primary!, 'writer')).toEqual({ model: 'gpt-4o', maxInputTokens: 120_000 });
    expect(modelFor(backup!, 'router')).toEqual({ model: 'deepseek-chat', maxInputTokens: 60_000 });
  });

  it('accepts model names with colons and slashes, rejects malformed entries', () => {
    expect(parseRoleModels('writer=qwen2.5:7b,router=meta-llama/Llama-3.1-8B@8192', 32_000)).toEqual({
      writer: { model: 'qwen2.5:7b', maxInputTokens: 32_000 },
      router: { model: 'meta-llama/Llama-3.1-8B', maxInputTokens: 8192 },
    });
    expect(() => parseRoleModels('router', 1, 'LLM_ROLE_MODEL_OVERRIDES')).toThrow(
      /LLM_ROLE_MODEL_OVERRIDES/,
    );
    expect(() => parseRoleModels('router=a@b', 1)).toThrow();
  });

  it('counts with cl100k for GPT-4 / 3.5 era models and o200k otherwise', () => {
    expect(encodingForModel('gpt-4-turbo')).toBe('cl100k_base');
    expect(encodingForModel('gpt-3.5-turbo')).toBe('cl100k_base');
    expect(encodingForModel('gpt-4o-mini')).toBe('o200k_base');
    expect(encodingForModel('gpt-4.1')).toBe('o200k_base');
    expect(encodingForModel('deepseek-chat')).toBe('o200k_base');
  });
});

describe('output truncation', () => {
  it('asks for a continuation only for a length cut without tool calls', () => {
    expect(needsContinuation({ finishReason: 'length', toolCalls: [] })).toBe(true);
    expect(needsContinuation({ finishReason: 'length', toolCalls: [{}] })).toBe(false);
    expect(needsContinuation({ finishReason: 'stop', toolCalls: [] })).toBe(false);
    expect(continuationMessages('<file>\n半句')).toEqual([
      { role: 'assistant', content: '<file>\n半句' },
      { role: 'user', content: CONTINUATION_PROMPT },
    ]);
  });
});

describe('provider request settings', () => {
  it('carries the output caps and each provider its own request fields', () => {
    const [primary, backup] = providersFromSettings({
      ...base,
      LLM_BACKUP_BASE_URL: 'https://api.deepseek.com/v1',
      LLM_MAX_OUTPUT_TOKENS: 8192,
      LLM_ROLE_MAX_OUTPUT_TOKENS: 'router=1024, suggest=512',
      LLM_PRIMARY_OUTPUT_TOKENS_FIELD: 'max_completion_tokens',
      LLM_PRIMARY_USER_FIELD: 'safety_identifier',
      LLM_PRIMARY_PROMPT_CACHE_KEY: true,
      LLM_BACKUP_QUILL_HEADERS: false,
    });
    expect(primary).toMatchObject({
      maxOutputTokens: 8192,
      roleMaxOutputTokens: { router: 1024, suggest: 512 },
      request: {
        outputTokensField: 'max_completion_tokens',
        userField: 'safety_identifier',
        promptCacheKey: true,
      },
    });
    expect(backup).toMatchObject({ maxOutputTokens: 8192, request: { quillHeaders: false } });
    expect(backup!.request).not.toHaveProperty('outputTokensField');
  });

  it('rejects a malformed LLM_ROLE_MAX_OUTPUT_TOKENS entry by name', () => {
    expect(() => parseRoleCaps('router=lots')).toThrow(/LLM_ROLE_MAX_OUTPUT_TOKENS: expected role=tokens/);
    expect(() => parseRoleCaps('router=0')).toThrow(/LLM_ROLE_MAX_OUTPUT_TOKENS/);
    expect(parseRoleCaps(undefined)).toEqual({});
  });
});

describe('retry-after', () => {
  const now = Date.parse('2026-12-01T12:00:00Z');
  it.each([
    [{ 'retry-after': '3' }, 3000],
    [{ 'retry-after': '0.5' }, 500],
    [{ 'retry-after': 'Tue, 01 Dec 2026 12:00:07 GMT' }, 7000],
    [{ 'retry-after': 'Tue, 01 Dec 2026 11:59:00 GMT' }, 0],
    [{ 'retry-after-ms': '250', 'retry-after': '30' }, 250],
    [{ 'retry-after': 'soon' }, undefined],
    [{}, undefined],
  ])('%o → %s ms', (headers, expected) => {
    expect(retryAfterMs(headers, now)).toBe(expected);
    expect(retryAfterMs(new Headers(headers), now)).toBe(expected);
  });

  it('waits what was asked, the default without an answer, and not at all beyond the cap', () => {
    const settings = { defaultMs: 1000, capMs: 10_000 };
    expect(sameProviderRetryDelay(4000, settings)).toBe(4000);
    expect(sameProviderRetryDelay(undefined, settings)).toBe(1000);
    expect(sameProviderRetryDelay(10_001, settings)).toBeUndefined();
  });
});
