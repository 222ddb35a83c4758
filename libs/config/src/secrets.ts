import type { ConfigValues } from './schema.ts';

/** The local defaults that must never reach production: they are public in this repository. */
export const PUBLIC_DEFAULT_SECRETS = {
  AUTH_JWT_SECRET: 'quill-local-development-secret',
  LLM_PRIMARY_API_KEY: 'quill-local-fake-key',
} as const;

/**
 * Which secrets a process uses: `auth` signs and verifies access tokens (the gateway), `llm`
 * calls the model providers (every service that calls a model). A process that uses neither
 * (billing, migrations) starts without them.
 */
export type SecretUse = 'auth' | 'llm';

// HS256 wants a key at least as long as its output (RFC 7518 §3.2: 256 bits).
const MIN_JWT_SECRET_CHARS = 32;
const MIN_DISTINCT_CHARS = 12;
const PLACEHOLDER = /^(change[-_]?me|secret|password|example|test|dummy|placeholder|xxx+|no-key)/i;

/**
 * With NODE_ENV=production every secret the process uses must be set and must not be a public
 * default or a placeholder; the JWT secret must also be long and varied enough to resist a
 * dictionary or brute-force attack. Returns the problems (empty = fine), never the values.
 */
export function productionSecretIssues(values: ConfigValues, uses: readonly SecretUse[]): string[] {
  if (values.NODE_ENV !== 'production') return [];
  const issues: string[] = [];
  if (uses.includes('auth')) {
    const secret = values.AUTH_JWT_SECRET;
    if (secret === PUBLIC_DEFAULT_SECRETS.AUTH_JWT_SECRET) {
      issues.push('AUTH_JWT_SECRET: required in production (the default is public)');
    } else if (
      secret.length < MIN_JWT_SECRET_CHARS ||
      new Set(secret).size < MIN_DISTINCT_CHARS ||
      PLACEHOLDER.test(secret)
    ) {
      issues.push(
        `AUTH_JWT_SECRET: too weak for production (use at least ${MIN_JWT_SECRET_CHARS} random characters, e.g. \`openssl rand -base64 48\`)`,
      );
    }
  }
  if (uses.includes('llm')) {
    const primary = values.LLM_PRIMARY_API_KEY;
    if (primary === PUBLIC_DEFAULT_SECRETS.LLM_PRIMARY_API_KEY || PLACEHOLDER.test(primary)) {
      issues.push('LLM_PRIMARY_API_KEY: required in production (the default is the fake LLM key)');
    }
    if (values.LLM_BACKUP_BASE_URL) {
      const backup = values.LLM_BACKUP_API_KEY;
      if (!backup || PLACEHOLDER.test(backup)) {
        issues.push('LLM_BACKUP_API_KEY: required in production when LLM_BACKUP_BASE_URL is set');
      }
    }
  }
  return issues;
}
