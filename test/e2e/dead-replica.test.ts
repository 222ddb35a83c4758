import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../support/api.ts';
import type { ServiceProcess } from '../support/service-process.ts';
import { frameTypes, readStream, startRun } from '../support/sse-client.ts';
import { type Stack, startStack } from '../support/stack.ts';

// A replica that stops answering (SIGSTOP: its subscriptions stay, so the queue group keeps
// handing it requests) never fails a run another replica can serve (README "Fault tolerance").
let stack: Stack;
const frozen: ServiceProcess[] = [];

beforeAll(async () => {
  stack = await startStack({
    replicas: { context: 2, billing: 2 },
    env: {
      AGENT_ROUTER_STRATEGY: 'off',
      NATS_REQUEST_TIMEOUT_MS: '1000',
      // Each attempt goes to a queue-group member at random, so a request misses the live replica
      // on every one of n attempts with odds 2^-n. Attempts start about every 2.5 s after the
      // first few: 20 s made that about 1 in 500 per request, and four runs make a dozen such
      // requests (compile, reserve, settle); 60 s makes it about 1 in 10 million.
      NATS_REQUEST_DEADLINE_MS: '60000',
      GATEWAY_RATE_LIMIT_PER_MINUTE: '1000',
    },
  });
});

afterAll(async () => {
  for (const service of frozen) service.child.kill('SIGCONT');
  await stack?.stop();
});

describe('a frozen context and billing replica', () => {
  // Its own budget: each of the runs' requests may spend part of its 60-s deadline on a frozen replica.
  it('every run still compiles, reserves, completes and settles on the live replicas', async () => {
    for (const name of ['context', 'billing'] as const) {
      const replica = stack.services.find((service) => service.name === name)!;
      replica.child.kill('SIGSTOP');
      frozen.push(replica);
    }
    stack.fakeLlm.addScript({
      match: { role: 'writer' },
      responses: [{ text: '林晚推开门。', tokens_per_second: 200 }],
    });
    // With one attempt each, four runs would all have missed the frozen replicas (context,
    // reserve and settle each) about once in 4,000.
    const runIds: string[] = [];
    for (let run = 0; run < 4; run++) {
      const response = await startRun(stack.gateways[0]!, stack.apiKey, {
        project_id: stack.projectId,
        message: `写一句开头 ${run}`,
      });
      expect(response.status).toBe(200);
      runIds.push(response.headers.get('x-quill-run-id')!);
      const result = await readStream(response);
      const types = frameTypes(result);
      expect(types.at(-1)).toBe('done');
      expect(types).toContain('workflow_complete');
      expect(types).not.toContain('error');
    }
    const settled = await eventually(async () => {
      const { rows } = await stack.pool.query<{
        run_id: string;
        phase: string;
        billing_decision: string | null;
      }>('SELECT run_id, phase, billing_decision FROM runs WHERE run_id = ANY($1)', [runIds]);
      return rows.length === 4 && rows.every((row) => row.billing_decision) ? rows : undefined;
      // A settlement is asked for until the same deadline.
    }, 90_000);
    expect(settled.map((row) => [row.phase, row.billing_decision])).toEqual(
      Array(4).fill(['done', 'charge']),
    );
  }, 240_000);
});
