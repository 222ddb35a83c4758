import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Stack, startStack } from '../support/stack.ts';

// A key set one way in the process and another in the .env file (docs/agent-behaviour.md 坑 1):
// the gateway must say so in its start-up log and on /health, masked, whoever wins.
const directory = mkdtempSync(join(tmpdir(), 'quill-dotenv-'));
const dotenv = join(directory, '.env');
writeFileSync(dotenv, 'AGENT_AUTO_REVIEW_THRESHOLD_CHARS=600\nAGENT_SKILL_TOKEN_BUDGET=12345\n');

let stack: Stack;
beforeAll(async () => {
  stack = await startStack({
    replicas: { context: 0, billing: 0, router: 0, writer: 0, reviewer: 0 },
    env: {
      QUILL_ENV_PRIORITY: 'dotenv',
      QUILL_ENV_FILE: dotenv,
      AGENT_AUTO_REVIEW_THRESHOLD_CHARS: '500',
      AGENT_SKILL_TOKEN_BUDGET: '16000',
    },
  });
});
afterAll(async () => {
  await stack?.stop();
  rmSync(directory, { recursive: true, force: true });
});

describe('config conflicts between .env and the process environment', () => {
  it('lists each conflict on /health with the winner and the masked effective value', async () => {
    const response = await fetch(`${stack.gateways[0]}/api/v1/health`);
    const body = (await response.json()) as { config_conflicts: unknown[] };
    expect(body.config_conflicts).toEqual(
      expect.arrayContaining([
        { key: 'AGENT_AUTO_REVIEW_THRESHOLD_CHARS', winner: 'dotenv', effective: '600' },
        // A key that looks like a secret shows only its last four characters.
        { key: 'AGENT_SKILL_TOKEN_BUDGET', winner: 'dotenv', effective: '****2345' },
      ]),
    );
    expect(body.config_conflicts).toHaveLength(2);
  });

  it('warns about each conflict when the service starts, without the unmasked value', () => {
    const gateway = stack.services.find((service) => service.name === 'gateway')!;
    const warnings = gateway
      .output()
      .split('\n')
      .filter((line) => line.includes('config set differently'))
      .map((line) => JSON.parse(line) as { level: string; config_key: string; effective: string });
    expect(
      warnings
        .map(({ config_key, effective }) => ({ key: config_key, effective }))
        .sort((a, b) => a.key.localeCompare(b.key)),
    ).toEqual([
      { key: 'AGENT_AUTO_REVIEW_THRESHOLD_CHARS', effective: '600' },
      { key: 'AGENT_SKILL_TOKEN_BUDGET', effective: '****2345' },
    ]);
    expect(gateway.output()).not.toContain('12345');
  });
});
