import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRun } from '../support/sse-client.ts';
import { type Stack, startStack } from '../support/stack.ts';

// The per-user rate limit on model-triggering endpoints is counted in Redis, so it holds across
// gateway replicas.
let stack: Stack;

beforeAll(async () => {
  stack = await startStack({ replicas: { gateway: 2 }, env: { GATEWAY_RATE_LIMIT_PER_MINUTE: '3' } });
});

afterAll(async () => {
  await stack?.stop();
});

describe('per-user rate limit', () => {
  it('answers 429 rate_limited with retry-after once the user’s budget is spent on any replica', async () => {
    const [gatewayA, gatewayB] = stack.gateways as [string, string];
    // Invalid bodies are still requests against the budget, and start no runs.
    const statuses: number[] = [];
    for (const gateway of [gatewayA, gatewayB, gatewayA]) {
      statuses.push((await startRun(gateway, stack.apiKey, { project_id: 'nope', message: '' })).status);
    }
    expect(statuses).toEqual([400, 400, 400]);
    const limited = await startRun(gatewayB, stack.apiKey, { project_id: stack.projectId, message: '写' });
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await limited.json()).toMatchObject({ error: { code: 'rate_limited', retryable: true } });
    // Reads are not model-triggering and stay available.
    const health = await fetch(`${gatewayB}/api/v1/health`);
    expect(health.status).toBe(200);
  });
});
