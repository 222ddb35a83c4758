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
}
