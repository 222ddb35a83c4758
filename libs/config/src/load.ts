import { existsSync, readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { parse as parseDotenv } from 'dotenv';
import { z } from 'zod';
import { type DerivedSettings, deriveSettings } from './derived.ts';
import { CONFIG_KEYS, ConfigSchema, type ConfigValues } from './schema.ts';
import { productionSecretIssues, type SecretUse } from './secrets.ts';

export interface ConfigConflict {
  readonly key: string;
  /** Which source won under QUILL_ENV_PRIORITY. */
  readonly winner: 'dotenv' | 'process';
  /** The effective value, masked: enough to recognise, never enough to use. */
  readonly effective: string;
}

export type Config = Readonly<ConfigValues> & {
  readonly instanceId: string;
  readonly conflicts: readonly ConfigConflict[];
  /** Settings computed from the ones above, once (derived.ts). */
  readonly derived: DerivedSettings;
};

export class ConfigError extends Error {
  readonly issues: string[];
  constructor(issues: string[]) {
    super(`invalid configuration: ${issues.join('; ')}`);
    this.name = new.target.name;
    this.issues = issues;
  }
}

const SECRET_PATTERN = /(KEY|TOKEN|SECRET|PASSWORD)/;

export function maskValue(key: string, value: string): string {
  if (SECRET_PATTERN.test(key)) return value.length <= 4 ? '****' : `****${value.slice(-4)}`;
  // URLs can embed credentials: keep scheme and host, hide userinfo.
  return value.replace(/\/\/[^@/]*@/, '//****@');
}

export interface ConfigSource {
  /** Process environment; defaults to process.env. */
  env?: Record<string, string | undefined>;
  /** Dotenv file contents; defaults to reading QUILL_ENV_FILE when it exists. */
  dotenv?: Record<string, string>;
  /** Explicit overrides applied last (tests, child processes). */
  overrides?: Partial<Record<keyof ConfigValues, string>>;
  /**
   * The secrets this process uses; with NODE_ENV=production each must be set to a real value,
   * or loading fails (secrets.ts). Unset: none are checked (scripts, tests).
   */
  secrets?: readonly SecretUse[];
}

/**
 * Reads configuration once. `.env` vs process precedence is explicit (docs/agent-behaviour.md 坑 1), and every
 * key set differently in both is reported as a conflict, whichever side wins.
 */
export function loadConfig(source: ConfigSource = {}): Config {
  const env = source.env ?? process.env;
  const priority = z.enum(['dotenv', 'process', 'none']).catch('dotenv').parse(env.QUILL_ENV_PRIORITY);
  const dotenvValues = priority === 'none' ? {} : (source.dotenv ?? readDotenv(env.QUILL_ENV_FILE ?? '.env'));

  const merged: Record<string, string | undefined> = {};
  const conflicts: ConfigConflict[] = [];
  for (const key of CONFIG_KEYS) {
    const fromProcess = env[key];
    const fromDotenv = dotenvValues[key];
    let value = fromProcess ?? fromDotenv;
    if (fromProcess !== undefined && fromDotenv !== undefined) {
      const winner = priority === 'process' ? 'process' : 'dotenv';
      value = winner === 'process' ? fromProcess : fromDotenv;
      if (fromProcess !== fromDotenv) conflicts.push({ key, winner, effective: maskValue(key, value) });
    }
    const override = source.overrides?.[key];
    if (override !== undefined) value = override;
    // An empty variable means "not set", so the local default applies.
    merged[key] = value === '' ? undefined : value;
  }

  const parsed = ConfigSchema.safeParse(merged);
  if (!parsed.success) {
    throw new ConfigError(parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`));
  }
  const values = parsed.data;
  const issues = [...productionSecretIssues(values, source.secrets ?? []), ...identityProviderIssues(values)];
  if (issues.length > 0) throw new ConfigError(issues);
  return Object.freeze({
    ...values,
    instanceId: values.SERVICE_INSTANCE_ID ?? `${hostname()}-${process.pid}`,
    conflicts: Object.freeze(conflicts),
    derived: deriveSettings(values),
  });
}

/** An identity provider's tokens are only checkable with the issuer and audience they must name. */
function identityProviderIssues(values: ConfigValues): string[] {
  if (!values.AUTH_JWKS_URL) return [];
  return (['AUTH_JWKS_ISSUER', 'AUTH_JWKS_AUDIENCE'] as const)
    .filter((key) => !values[key])
    .map((key) => `${key}: required when AUTH_JWKS_URL is set`);
}

function readDotenv(path: string): Record<string, string> {
  return existsSync(path) ? parseDotenv(readFileSync(path)) : {};
}
