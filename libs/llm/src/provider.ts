import type { ProviderRequestOptions } from './request-fields.ts';

/**
 * One OpenAI-compatible endpoint. A plain object so that the failover layer can hold a primary
 * and a backup and build one client per provider.
 */
export interface LlmProvider {
  /** Stable name used in logs, usage records and circuit-breaker keys (e.g. `primary`). */
  name: string;
  /** Base URL ending in `/v1`. */
  baseUrl: string;
  apiKey: string;
  model: string;
  /** The model's context window for input; the context compiler budgets against it. */
  maxInputTokens: number;
  /** Per-role models on this endpoint (e.g. a cheaper model for `router`). */
  roleModels?: Readonly<Record<string, ModelTarget>>;
  /** The output cap sent with every call (the role's entry first); unset: the provider's default. */
  maxOutputTokens?: number;
  roleMaxOutputTokens?: Readonly<Record<string, number>>;
  /** Which optional request fields and headers this provider gets (request-fields.ts). */
  request?: Partial<ProviderRequestOptions>;
}

/**
 * A concrete model path. It always carries its context window (docs/agent-behaviour.md 坑 2): a model without a
 * declared window cannot be budgeted or trimmed for, so no path may omit it.
 */
export interface ModelTarget {
  model: string;
  maxInputTokens: number;
}

export function modelFor(provider: LlmProvider, role: string): ModelTarget {
  return provider.roleModels?.[role] ?? { model: provider.model, maxInputTokens: provider.maxInputTokens };
}
