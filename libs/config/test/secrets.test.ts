import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/index.ts';
import { ConfigError } from '../src/load.ts';
import { PUBLIC_DEFAULT_SECRETS } from '../src/secrets.ts';

const STRONG_SECRET = 'k3J9vQ2mX7pL0sR5tW8yZ1aB4cD6eF-gH_iJ';
const production = { NODE_ENV: 'production', QUILL_ENV_PRIORITY: 'none' };

function issuesOf(env: Record<string, string>, secrets: Array<'auth' | 'llm'>): string[] {
  try {
    loadConfig({ env, secrets });
    return [];
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as ConfigError).issues;
  }
}

describe('production secrets', () => {
  it('refuses the public defaults, naming each missing secret', () => {
    const issues = issuesOf(production, ['auth', 'llm']);
    expect(issues).toHaveLength(2);
    expect(issues[0]).toMatch(/^AUTH_JWT_SECRET: required in production/);
    expect(issues[1]).toMatch(/^LLM_PRIMARY_API_KEY: required in production/);
    // The error names settings, never values.
    expect(issues.join(' ')).not.toContain(PUBLIC_DEFAULT_SECRETS.AUTH_JWT_SECRET);
  });

  it.each([
    ['short', 'aB3$dE6&gH9*jK2'.padEnd(20, 'x')],
    ['repetitive', 'abababababababababababababababababab'],
    ['a placeholder', 'changeme-changeme-0123456789abcdefghij'],
  ])('refuses a %s JWT secret', (_kind, secret) => {
    const issues = issuesOf({ ...production, AUTH_JWT_SECRET: secret, LLM_PRIMARY_API_KEY: 'sk-real' }, [
      'auth',
      'llm',
    ]);
    expect(issues).toEqual([expect.stringMatching(/^AUTH_JWT_SECRET: too weak for production/)]);
  });

  it('requires the backup key once a backup provider is configured', () => {
    const env = {
      ...production,
      AUTH_JWT_SECRET: STRONG_SECRET,
      LLM_PRIMARY_API_KEY: 'sk-primary-real',
      LLM_BACKUP_BASE_URL: 'https://api.deepseek.com/v1',
    };
    expect(issuesOf(env, ['llm'])).toEqual([expect.stringMatching(/^LLM_BACKUP_API_KEY: required/)]);
    expect(issuesOf({ ...env, LLM_BACKUP_API_KEY: 'no-key' }, ['llm'])).toHaveLength(1);
    expect(issuesOf({ ...env, LLM_BACKUP_API_KEY: 'sk-backup-real' }, ['auth', 'llm'])).toEqual([]);
  });

  it('checks only the secrets a process uses, and nothing outside production', () => {
    expect(issuesOf(production, [])).toEqual([]);
    expect(issuesOf({ ...production, LLM_PRIMARY_API_KEY: 'sk-real' }, ['llm'])).toEqual([]);
    expect(issuesOf({ NODE_ENV: 'development' }, ['auth', 'llm'])).toEqual([]);
    expect(loadConfig({ env: production }).AUTH_JWT_SECRET).toBe(PUBLIC_DEFAULT_SECRETS.AUTH_JWT_SECRET);
  });

  it('bounds the token lifetime', () => {
    expect(issuesOf({ AUTH_JWT_TTL_S: '86401' }, [])).toEqual([expect.stringMatching(/^AUTH_JWT_TTL_S/)]);
    expect(loadConfig({ env: { AUTH_JWT_TTL_S: '3600' } }).AUTH_JWT_TTL_S).toBe(3600);
  });
});

describe('GATEWAY_CORS_ORIGINS', () => {
  it('is a list of origins, empty by default', () => {
    expect(loadConfig({ env: {} }).GATEWAY_CORS_ORIGINS).toEqual([]);
    expect(
      loadConfig({ env: { GATEWAY_CORS_ORIGINS: 'https://app.example.com, http://localhost:5173' } })
        .GATEWAY_CORS_ORIGINS,
    ).toEqual(['https://app.example.com', 'http://localhost:5173']);
  });

  it.each(['*', 'https://app.example.com/', 'app.example.com', 'ftp://example.com'])(
    'refuses %s',
    (origin) => {
      expect(issuesOf({ GATEWAY_CORS_ORIGINS: origin }, [])).toEqual([
        expect.stringMatching(/^GATEWAY_CORS_ORIGINS: not an origin/),
      ]);
    },
  );
});

describe('AUTH_JWKS_URL', () => {
  it('needs the issuer and audience its tokens must carry', () => {
    expect(issuesOf({ AUTH_JWKS_URL: 'https://login.example.com/.well-known/jwks.json' }, [])).toEqual([
      'AUTH_JWKS_ISSUER: required when AUTH_JWKS_URL is set',
      'AUTH_JWKS_AUDIENCE: required when AUTH_JWKS_URL is set',
    ]);
    const config = loadConfig({
      env: {
        AUTH_JWKS_URL: 'https://login.example.com/.well-known/jwks.json',
        AUTH_JWKS_ISSUER: 'https://login.example.com/',
        AUTH_JWKS_AUDIENCE: 'quill',
      },
    });
    expect(config.AUTH_JWKS_MAX_LIFETIME_S).toBe(3600);
    expect(issuesOf({ AUTH_JWKS_URL: 'not a url' }, [])).toEqual([expect.stringMatching(/^AUTH_JWKS_URL/)]);
  });
});
