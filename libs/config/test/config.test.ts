import { describe, expect, it } from 'vitest';
import { CONFIG_KEYS, ConfigSchema, loadConfig, maskValue } from '../src/index.ts';
import { ConfigError } from '../src/load.ts';

/** Loads without touching process.env or a real .env file. */
const load = (env: Record<string, string | undefined>, dotenv: Record<string, string> = {}) =>
  loadConfig({ env, dotenv });

function configError(run: () => unknown): ConfigError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return error as ConfigError;
  }
  throw new Error('expected a ConfigError');
}

describe('defaults', () => {
  it('load with an empty env and no dotenv', () => {
    const config = load({});
    expect(config.NATS_URL).toBe('nats://127.0.0.1:4222');
    expect(config.REDIS_URL).toBe('redis://127.0.0.1:6379');
    expect(config.QUILL_ENV_PRIORITY).toBe('dotenv');
    expect(config.NODE_ENV).toBe('development');
    expect(config.GATEWAY_PORT).toBe(8080);
    expect(config.AGENT_TEXT_FLUSH_MS).toBe(40);
    expect(config.QUILL_BUS_NAMESPACE).toBe('');
    expect(config.LLM_BACKUP_BASE_URL).toBeUndefined();
    expect(config.conflicts).toEqual([]);
    expect(config.instanceId).toMatch(/.+-\d+$/);
  });

  it('every key has a default or is optional', () => {
    expect(CONFIG_KEYS.length).toBeGreaterThan(20);
    expect(ConfigSchema.safeParse({}).success).toBe(true);
    for (const key of CONFIG_KEYS) {
      expect(ConfigSchema.shape[key].safeParse(undefined).success, key).toBe(true);
    }
    const config = load({});
    for (const key of CONFIG_KEYS) expect(key in config, key).toBe(true);
  });

  it('is frozen, and SERVICE_INSTANCE_ID names the instance', () => {
    const config = load({ SERVICE_INSTANCE_ID: 'router-7' });
    expect(Object.isFrozen(config)).toBe(true);
    expect(Object.isFrozen(config.conflicts)).toBe(true);
    expect(config.instanceId).toBe('router-7');
  });

  it('treats an empty variable as unset and ignores unknown variables', () => {
    const config = load({ GATEWAY_PORT: '', SERVICE_INSTANCE_ID: '', SOMETHING_ELSE: 'x' });
    expect(config.GATEWAY_PORT).toBe(8080);
    expect(config.SERVICE_INSTANCE_ID).toBeUndefined();
    expect('SOMETHING_ELSE' in config).toBe(false);
  });

  it('coerces numbers and applies overrides last', () => {
    const config = loadConfig({
      env: { GATEWAY_PORT: '9000', OTEL_TRACES_SAMPLER_RATIO: '0.25' },
      dotenv: { GATEWAY_PORT: '9100' },
      overrides: { GATEWAY_PORT: '9200', LOG_LEVEL: 'debug' },
    });
    expect(config.GATEWAY_PORT).toBe(9200);
    expect(config.OTEL_TRACES_SAMPLER_RATIO).toBe(0.25);
    expect(config.LOG_LEVEL).toBe('debug');
  });
});

describe('QUILL_ENV_PRIORITY', () => {
  const dotenv = { LOG_LEVEL: 'warn', GATEWAY_PORT: '7000' };

  it('dotenv (the default) lets the dotenv file win', () => {
    for (const env of [{ LOG_LEVEL: 'debug' }, { LOG_LEVEL: 'debug', QUILL_ENV_PRIORITY: 'dotenv' }]) {
      const config = load(env, dotenv);
      expect(config.LOG_LEVEL).toBe('warn');
      expect(config.GATEWAY_PORT).toBe(7000);
    }
  });

  it('process lets the process environment win', () => {
    const config = load({ LOG_LEVEL: 'debug', QUILL_ENV_PRIORITY: 'process' }, dotenv);
    expect(config.QUILL_ENV_PRIORITY).toBe('process');
    expect(config.LOG_LEVEL).toBe('debug');
    // A key only in the dotenv file still applies.
    expect(config.GATEWAY_PORT).toBe(7000);
  });

  it('none ignores the dotenv file entirely', () => {
    const config = load({ LOG_LEVEL: 'debug', QUILL_ENV_PRIORITY: 'none' }, dotenv);
    expect(config.LOG_LEVEL).toBe('debug');
    expect(config.GATEWAY_PORT).toBe(8080);
    expect(config.conflicts).toEqual([]);
  });

  it('an invalid priority is a configuration error naming the key', () => {
    const error = configError(() => load({ QUILL_ENV_PRIORITY: 'sometimes' }));
    expect(error.issues.some((issue) => issue.startsWith('QUILL_ENV_PRIORITY'))).toBe(true);
  });
});

describe('conflicts', () => {
  const processSide = {
    LLM_PRIMARY_API_KEY: 'sk-process-secret-1111',
    DATABASE_URL: 'postgres://app:process-pass@db-process:5432/quill',
    LOG_LEVEL: 'debug',
    GATEWAY_PORT: '8080',
  };
  const dotenvSide = {
    LLM_PRIMARY_API_KEY: 'sk-dotenv-secret-2222',
    DATABASE_URL: 'postgres://app:dotenv-pass@db-dotenv:5432/quill',
    LOG_LEVEL: 'warn',
    GATEWAY_PORT: '8080',
  };

  it.each([
    ['dotenv', '****2222', 'postgres://****@db-dotenv:5432/quill', 'warn'],
    ['process', '****1111', 'postgres://****@db-process:5432/quill', 'debug'],
  ] as const)('are reported, masked, when %s wins', (priority, key, url, level) => {
    const config = load({ ...processSide, QUILL_ENV_PRIORITY: priority }, dotenvSide);
    expect(config.LLM_PRIMARY_API_KEY).toBe(
      priority === 'dotenv' ? dotenvSide.LLM_PRIMARY_API_KEY : processSide.LLM_PRIMARY_API_KEY,
    );
    const byKey = Object.fromEntries(config.conflicts.map((conflict) => [conflict.key, conflict]));
    expect(Object.keys(byKey).sort()).toEqual(['DATABASE_URL', 'LLM_PRIMARY_API_KEY', 'LOG_LEVEL']);
    expect(byKey.LLM_PRIMARY_API_KEY).toEqual({
      key: 'LLM_PRIMARY_API_KEY',
      winner: priority,
      effective: key,
    });
    expect(byKey.DATABASE_URL).toEqual({ key: 'DATABASE_URL', winner: priority, effective: url });
    expect(byKey.LOG_LEVEL).toEqual({ key: 'LOG_LEVEL', winner: priority, effective: level });
    // Neither side's secret leaks through the report.
    const report = JSON.stringify(config.conflicts);
    for (const secret of ['secret-1111', 'secret-2222', 'process-pass', 'dotenv-pass']) {
      expect(report).not.toContain(secret);
    }
  });

  it('a key set identically in both is not a conflict', () => {
    expect(load({ LOG_LEVEL: 'warn' }, { LOG_LEVEL: 'warn' }).conflicts).toEqual([]);
  });
});

describe('maskValue', () => {
  it('keeps only the last four characters of secrets', () => {
    expect(maskValue('LLM_PRIMARY_API_KEY', 'sk-abcdefgh1234')).toBe('****1234');
    expect(maskValue('SOME_TOKEN', 'abcd')).toBe('****');
    expect(maskValue('DB_PASSWORD', 'xy')).toBe('****');
    expect(maskValue('CLIENT_SECRET', 'postgres://u:p@h/db')).toBe('****h/db');
  });

  it('hides URL credentials but keeps scheme and host', () => {
    expect(maskValue('REDIS_URL', 'redis://:hunter2@cache:6379/0')).toBe('redis://****@cache:6379/0');
    expect(maskValue('NATS_URL', 'nats://user:pw@a:4222')).toBe('nats://****@a:4222');
    expect(maskValue('NATS_URL', 'nats://127.0.0.1:4222')).toBe('nats://127.0.0.1:4222');
    expect(maskValue('LOG_LEVEL', 'info')).toBe('info');
  });
});

describe('invalid values', () => {
  it.each([
    ['GATEWAY_PORT', 'eighty'],
    ['GATEWAY_PORT', '80.5'],
    ['DATABASE_POOL_MAX', '0'],
    ['SESSION_LOCK_TTL_MS', '999'],
    ['OTEL_TRACES_SAMPLER_RATIO', '1.5'],
    ['LOG_LEVEL', 'loud'],
    ['NODE_ENV', 'staging'],
    ['AGENT_ROUTER_STRATEGY', 'random'],
    ['QUILL_BUS_NAMESPACE', 'Has.Dots'],
  ])('%s=%s throws a ConfigError naming the key', (key, value) => {
    const error = configError(() => load({ [key]: value }));
    expect(error.name).toBe('ConfigError');
    expect(error.message).toContain(key);
    expect(error.issues.some((issue) => issue.startsWith(`${key}:`))).toBe(true);
  });

  it('a bad value from the dotenv file is reported too', () => {
    const error = configError(() => load({}, { WORKER_CONCURRENCY: '-1' }));
    expect(error.message).toContain('WORKER_CONCURRENCY');
  });

  it('reports every invalid key at once', () => {
    const error = configError(() => load({ GATEWAY_PORT: 'x', LOG_LEVEL: 'y' }));
    expect(error.issues).toHaveLength(2);
  });
});

/** Keys whose value is a boolean (found from the schema, so a new flag is covered automatically). */
const BOOLEAN_KEYS = CONFIG_KEYS.filter(
  (key) => typeof ConfigSchema.shape[key].parse(undefined) === 'boolean',
);

describe('booleans', () => {
  it('the schema has boolean keys', () => {
    expect(BOOLEAN_KEYS.length).toBeGreaterThan(0);
  });

  describe.each(BOOLEAN_KEYS)('%s', (key) => {
    it.each([
      ['true', true],
      ['1', true],
      ['false', false],
      ['0', false],
    ])('%s → %s', (value, expected) => {
      expect(load({ [key]: value })[key]).toBe(expected);
    });

    it.each(['yes', 'no', 'TRUE', 'False', 'on', 'off', '2', ' true'])('%j is rejected', (value) => {
      const error = configError(() => load({ [key]: value }));
      expect(error.message).toContain(key);
    });
  });
});
