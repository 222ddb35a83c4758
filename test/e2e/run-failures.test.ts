import { randomUUID } from 'node:crypto';
import { type Bus, connectBus, publishEnvelope } from '@quill/bus';
import { isoNow, isTerminalFrame, msgIds, RunStartEnvelope } from '@quill/contracts';
import { createRedis, redisKeys, setStopFlag } from '@quill/redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, getJson, slowReply } from '../support/api.ts';
import { createTestRun } from '../support/run-rows.ts';
import type { ServiceProcess } from '../support/service-process.ts';
import { frameTypes, type ReceivedFrame, readStream, startRun } from '../support/sse-client.ts';
import { type Stack, startStack } from '../support/stack.ts';
import { testUrls } from '../support/urls.ts';

// The terminal guarantee when things fail: deadline, a router or a writer killed mid-run, a stop
// that lands before the first step. Short leases so redelivery happens within seconds.
let stack: Stack;
let bus: Bus;

beforeAll(async () => {
  stack = await startStack({
    replicas: { gateway: 2, router: 2, writer: 2 },
    env: {
      AGENT_RUN_WALL_CLOCK_TIMEOUT_S: '12',
      RUN_ACK_WAIT_S: '3',
      TASK_ACK_WAIT_S: '3',
      AGENT_STOP_GRACE_S: '2',
      GATEWAY_RATE_LIMIT_PER_MINUTE: '1000',
    },
  });
  bus = await connectBus({ url: testUrls.nats, namespace: stack.namespace, name: 'failures-test' });
});

afterAll(async () => {
  await bus?.close();
  await stack?.stop();
});

const terminals = (frames: ReceivedFrame[]) => frames.filter((received) => isTerminalFrame(received.frame));

/** The live replica of `name` whose log mentions the run (who is holding it right now). */
function holderOf(name: 'router' | 'writer', runId: string): ServiceProcess | undefined {
  return stack.services.find(
    (service) => service.name === name && service.child.exitCode === null && service.output().includes(runId),
  );
}

describe('terminal guarantee under failure', () => {
  it('ends a run that outlives the wall clock with a timeout terminal frame', async () => {
    stack.fakeLlm.addScript({ match: { role: 'writer' }, responses: [slowReply(60)] });
    const response = await startRun(stack.gateways[0]!, stack.apiKey, {
      project_id: stack.projectId,
      message: '写到天荒地老',
    });
    const result = await readStream(response);
    expect(frameTypes(result).at(-1)).toBe('done');
    expect(terminals(result.frames).map((received) => received.frame)).toEqual([
      expect.objectContaining({ type: 'workflow_stopped', reason: 'wall_clock_timeout' }),
    ]);
  });

  it('finishes a run on another router when the one holding it is killed with SIGKILL', async () => {
    stack.fakeLlm.addScript({
      match: { role: 'writer' },
      responses: [{ ...slowReply(4), text: `${'风'.repeat(80)}` }],
    });
    const response = await startRun(stack.gateways[0]!, stack.apiKey, {
      project_id: stack.projectId,
      message: '写一段',
    });
    const runId = response.headers.get('x-quill-run-id')!;
    const reading = readStream(response);
    const holder = await eventually(async () => holderOf('router', runId));
    holder.child.kill('SIGKILL');
    const result = await reading;
    expect(frameTypes(result).at(-1)).toBe('done');
    expect(terminals(result.frames)).toHaveLength(1);
    expect(terminals(result.frames)[0]!.frame.type).toBe('workflow_complete');
    const other = stack.services.find(
      (service) => service.name === 'router' && service !== holder && service.output().includes(runId),
    );
    expect(other?.output()).toContain('taking over run');
    await stack.startService('router');
  });

  it('ends a run with exactly one terminal frame when the writer holding its step is killed', async () => {
    stack.fakeLlm.addScript({ match: { role: 'writer' }, responses: [slowReply(4)] });
    const response = await startRun(stack.gateways[1]!, stack.apiKey, {
      project_id: stack.projectId,
      message: '再写一段',
    });
    const runId = response.headers.get('x-quill-run-id')!;
    const reading = readStream(response);
    const holder = await eventually(async () => holderOf('writer', runId));
    holder.child.kill('SIGKILL');
    const result = await reading;
    expect(frameTypes(result).at(-1)).toBe('done');
    expect(terminals(result.frames)).toHaveLength(1);
    const run = await getJson(stack.gateways[0]!, `/agent/runs/${runId}`, stack.apiKey);
    expect(['done', 'error']).toContain(run.body.phase);
    await stack.startService('writer');
  });

  it('stops a run whose stop arrived before its first step, without calling the model', async () => {
    const { sessionId, runId } = await createTestRun(stack.pool, {
      projectId: stack.projectId,
      userId: stack.userId,
      title: 'stop early',
      started: false,
    });
    const redis = createRedis(testUrls.redis);
    await setStopFlag(redis, redisKeys(stack.redisPrefix).stop(runId), 'user_stopped', 60_000);
    await redis.quit();
    await publishEnvelope(
      bus,
      bus.names.runStart(runId),
      RunStartEnvelope,
      {
        v: 1,
        run_id: runId,
        session_id: sessionId,
        project_id: stack.projectId,
        user_id: stack.userId,
        message_id: randomUUID(),
        message: '写',
        focus_file_id: null,
        attached_file_ids: [],
        generation_mode: 'fast',
        ui_language: 'zh',
        created_at: isoNow(),
      },
      { msgId: msgIds.runStart(runId) },
    );
    const result = await readStream(
      await fetch(`${stack.gateways[0]}/api/v1/agent/runs/${runId}/stream`, {
        headers: { authorization: `Bearer ${stack.apiKey}` },
      }),
    );
    expect(terminals(result.frames).map((received) => received.frame)).toEqual([
      expect.objectContaining({ type: 'workflow_stopped', reason: 'user_stopped' }),
    ]);
    expect(stack.fakeLlm.requests({ run_id: runId })).toHaveLength(0);
  });
});
