import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { busNames, isTerminalFrame } from '@quill/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchRun } from '../support/background-run.ts';
import { type Stack, startStack } from '../support/stack.ts';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.ts';
import { testUrls } from '../support/urls.ts';

/**
 * Many runs at once while the writer cannot reach Postgres (out of connection slots, a dropped
 * connection): the step set-up rides the fault out instead of failing its task's few deliveries,
 * after which JetStream dropped the task and the run waited for the wall clock (README "Fault
 * tolerance"). The writer's pool is small, as in the tests and benchmarks that found it.
 */
const RUNS = 40;
let stack: Stack;
let proxy: TcpProxy;
beforeAll(async () => {
  stack = await startStack({
    replicas: { writer: 0 },
    env: {
      AGENT_ROUTER_STRATEGY: 'off',
      DATABASE_POOL_MAX: '2',
      USER_MAX_CONCURRENT_RUNS: '1000',
      GATEWAY_RATE_LIMIT_PER_MINUTE: '100000',
    },
  });
  await stack.pool.query('UPDATE quota_accounts SET credits = 100000000, daily_token_cap = NULL');
  proxy = await startTcpProxy({ host: '127.0.0.1', port: Number(new URL(stack.databaseUrl).port || 5432) });
  await stack.startService('writer', { DATABASE_URL: proxy.urlFor(stack.databaseUrl) });
});
afterAll(async () => {
  await stack?.stop();
  await proxy?.close();
});

/** Tasks dispatched, and how many deliveries the writer's task consumer has made. */
async function writerDeliveries(): Promise<{ deliveries: number; tasks: number }> {
  const names = busNames(stack.namespace);
  const nats = await connect({ servers: testUrls.nats, name: 'step-setup-faults' });
  try {
    const jsm = await jetstreamManager(nats);
    const stream = await jsm.streams.info(names.streams.tasks);
    const consumer = await jsm.consumers.info(names.streams.tasks, names.consumers.role('writer'));
    return { deliveries: consumer.delivered.consumer_seq, tasks: stream.state.last_seq };
  } finally {
    await nats.close();
  }
}

async function waitFor(what: string, check: () => Promise<boolean>, timeoutMs: number): Promise<boolean> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if (await check()) return true;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  if (timeoutMs >= 60_000) throw new Error(`timed out waiting for ${what}`);
  return false;
}

describe('step set-up under a database fault', () => {
  it('every run reaches the model and ends once when the writer was cut off from Postgres', async () => {
    stack.fakeLlm.addScript({
      match: { role: 'writer' },
      responses: Array.from({ length: RUNS }, () => ({ text: '写好了。' })),
    });
    proxy.cut();
    const runs = Array.from({ length: RUNS }, (_, index) => launchRun(stack, `第${index}章的思路`));
    // Every task is dispatched while the writer cannot read its run.
    await waitFor('every task dispatched', async () => (await writerDeliveries()).tasks >= RUNS, 90_000);
    // The cut lasts long enough for a task that fails its set-up to use up its deliveries (a
    // second apart); a writer that keeps the delivery while it retries never asks again.
    await waitFor(
      'the deliveries of a failing set-up',
      async () => (await writerDeliveries()).deliveries >= RUNS * 3,
      5_000,
    );
    proxy.restore();

    const ids = await Promise.all(runs.map((run) => run.runId));
    const frames = await Promise.all(runs.map((run) => run.frames));
    frames.forEach((received) => {
      const terminals = received.map((entry) => entry.frame).filter(isTerminalFrame);
      expect(terminals).toEqual([expect.objectContaining({ type: 'workflow_complete' })]);
    });
    for (const runId of ids) {
      expect(stack.fakeLlm.requests({ run_id: runId, role: 'writer' })).toHaveLength(1);
    }
  }, 240_000);
});
