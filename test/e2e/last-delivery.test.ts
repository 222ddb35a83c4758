import { isTerminalFrame } from '@quill/contracts';
import { getCredits } from '@quill/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchRun } from '../support/background-run.ts';
import { type Stack, startStack } from '../support/stack.ts';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.ts';

/**
 * A task whose every delivery fails (here: the writer cut off from Postgres for longer than its
 * set-up retries) is reported failed on its last delivery, so the run ends with one `error` frame
 * and is refunded; JetStream used to drop the task silently and the run waited for the wall clock
 * (README "Fault tolerance"). The wall clock is far beyond the test's own timeout, so only the
 * worker's report can end the run in time.
 */
let stack: Stack;
let proxy: TcpProxy;
beforeAll(async () => {
  stack = await startStack({
    replicas: { writer: 0 },
    env: {
      AGENT_ROUTER_STRATEGY: 'off',
      DATABASE_WRITE_RETRY_MS: '200',
      AGENT_RUN_WALL_CLOCK_TIMEOUT_S: '3600',
    },
  });
  proxy = await startTcpProxy({ host: '127.0.0.1', port: Number(new URL(stack.databaseUrl).port || 5432) });
  await stack.startService('writer', { DATABASE_URL: proxy.urlFor(stack.databaseUrl) });
});
afterAll(async () => {
  await stack?.stop();
  await proxy?.close();
});

describe('a task that fails every delivery', () => {
  it('ends its run with one error frame and refunds it', async () => {
    const creditsBefore = await getCredits(stack.pool, stack.userId);
    proxy.cut();
    const run = launchRun(stack, '写第一章');
    const frames = (await run.frames).map((entry) => entry.frame);
    const runId = await run.runId;
    proxy.restore();

    const terminals = frames.filter(isTerminalFrame);
    expect(terminals).toEqual([expect.objectContaining({ type: 'error', code: 'storage_unavailable' })]);
    expect(frames.filter((frame) => frame.type === 'quota_refunded')).toHaveLength(1);
    expect(await getCredits(stack.pool, stack.userId)).toBe(creditsBefore);
    const stored = await stack.pool.query('SELECT phase, billing_decision FROM runs WHERE run_id = $1', [
      runId,
    ]);
    expect(stored.rows[0]).toEqual({ phase: 'error', billing_decision: 'refund' });
    // The step never reached the model.
    expect(stack.fakeLlm.requests({ run_id: runId, role: 'writer' })).toHaveLength(0);
  }, 180_000);
});
