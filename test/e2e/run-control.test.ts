import { isTerminalFrame } from '@quill/contracts';
import { addProjectMember, createApiKey, createUser } from '@quill/db/gateway';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, getJson, postJson, slowReply } from '../support/api.ts';
import { frameTypes, type ReceivedFrame, readStream, startRun } from '../support/sse-client.ts';
import { type Stack, startStack } from '../support/stack.ts';

// Stop, steer, disconnect/resume and tenancy with two gateways and two routers: every action is
// sent to the replica that did NOT start the run.
let stack: Stack;
let gatewayA: string;
let gatewayB: string;

beforeAll(async () => {
  stack = await startStack({
    replicas: { gateway: 2, router: 2 },
    env: { AGENT_DISCONNECT_GRACE_S: '2', AGENT_STOP_GRACE_S: '3', GATEWAY_RATE_LIMIT_PER_MINUTE: '1000' },
  });
  [gatewayA, gatewayB] = stack.gateways as [string, string];
});

afterAll(async () => {
  await stack?.stop();
});

const terminals = (frames: ReceivedFrame[]) => frames.filter((received) => isTerminalFrame(received.frame));

async function firstFrames(response: Response, count: number) {
  return readStream(response, { stopAfter: count });
}

describe('stop', () => {
  it('stops a run through the other gateway; the run ends with workflow_stopped(user_stopped) then done', async () => {
    stack.fakeLlm.addScript({ match: { role: 'writer' }, responses: [slowReply(20)] });
    const response = await startRun(gatewayA, stack.apiKey, {
      project_id: stack.projectId,
      message: '写一段很长的开头',
    });
    const runId = response.headers.get('x-quill-run-id')!;
    const frames: ReceivedFrame[] = [];
    const reading = readStream(response, { onFrame: (received) => frames.push(received) });
    await eventually(async () =>
      frames.some((received) => received.frame.type === 'text') ? true : undefined,
    );

    const stop = await postJson(gatewayB, '/agent/stop', stack.apiKey, { run_id: runId });
    expect(stop.status).toBe(202);
    const result = await reading;
    expect(frameTypes(result).at(-1)).toBe('done');
    expect(terminals(result.frames).map((received) => received.frame)).toEqual([
      expect.objectContaining({ type: 'workflow_stopped', reason: 'user_stopped' }),
    ]);
    const run = await getJson(gatewayB, `/agent/runs/${runId}`, stack.apiKey);
    expect(run.body).toMatchObject({ phase: 'done', stop_reason: 'user_stopped' });
    // A stopped run frees its session: stop again is 409, and a new run can start.
    expect((await postJson(gatewayB, '/agent/stop', stack.apiKey, { run_id: runId })).status).toBe(409);
  });

  it('removes the blank placeholder file of a stopped, refunded round', async () => {
    stack.fakeLlm.addScript({
      match: { role: 'writer' },
      responses: [
        {
          text: '',
          tool_calls: [{ name: 'create_file', arguments: { title: '空白占位章', file_type: 'draft' } }],
        },
        { text: `让我想想……${'。'.repeat(400)}`, tokens_per_second: 20 },
      ],
    });
    const response = await startRun(gatewayA, stack.apiKey, {
      project_id: stack.projectId,
      message: '写空白占位章',
    });
    const runId = response.headers.get('x-quill-run-id')!;
    const frames: ReceivedFrame[] = [];
    const reading = readStream(response, { onFrame: (received) => frames.push(received) });
    await eventually(async () =>
      frames.some((received) => received.frame.type === 'tool_result') ? true : undefined,
    );
    await eventually(async () =>
      frames.some((received) => received.frame.type === 'text') ? true : undefined,
    );
    expect((await postJson(gatewayB, '/agent/stop', stack.apiKey, { run_id: runId })).status).toBe(202);
    const result = await reading;
    expect(frameTypes(result)).toContain('quota_refunded');
    // A writer removes it from the task the router left on its queue once the run ended.
    const placeholder = await eventually(async () => {
      const { rows } = await stack.pool.query('SELECT deleted, content FROM files WHERE title = $1', [
        '空白占位章',
      ]);
      return rows[0]?.deleted ? rows : undefined;
    });
    expect(placeholder).toEqual([{ deleted: true, content: '' }]);
  });

  it('answers 404 for a run that is not the caller’s and 400 without a run or session id', async () => {
    expect(
      (await postJson(gatewayA, '/agent/stop', stack.apiKey, { run_id: crypto.randomUUID() })).status,
    ).toBe(404);
    const missing = await postJson(gatewayA, '/agent/stop', stack.apiKey, {});
    expect(missing.status).toBe(400);
  });
});

describe('steer', () => {
  it('delivers an interjection to the next model call and as a steering_received frame', async () => {
    stack.fakeLlm.addScript({
      match: { role: 'writer' },
      responses: [
        {
          text: '我先建一个文件。',
          tool_calls: [{ name: 'create_file', arguments: { title: '插话测试', file_type: 'draft' } }],
          ttft_ms: 1500,
        },
        { text: '<file>\n正文。\n</file>\n写好了。' },
      ],
    });
    const response = await startRun(gatewayA, stack.apiKey, {
      project_id: stack.projectId,
      message: '写一章',
    });
    const runId = response.headers.get('x-quill-run-id')!;
    const sessionId = response.headers.get('x-quill-session-id')!;
    const frames: ReceivedFrame[] = [];
    const reading = readStream(response, { onFrame: (received) => frames.push(received) });
    await eventually(async () =>
      frames.some((received) => received.frame.type === 'agent_start') ? true : undefined,
    );

    const steer = await postJson(gatewayB, '/agent/steer', stack.apiKey, {
      session_id: sessionId,
      message: '主角改名叫阿青',
    });
    expect(steer.status).toBe(202);
    const result = await reading;
    expect(result.frames.some((received) => received.frame.type === 'steering_received')).toBe(true);
    const requests = stack.fakeLlm.requests({ run_id: runId, role: 'writer' });
    const sawSteer = requests.some((request) =>
      JSON.stringify((request.body as { messages: unknown[] }).messages).includes('主角改名叫阿青'),
    );
    expect(sawSteer).toBe(true);
    expect(frameTypes(result).at(-1)).toBe('done');

    const idle = await postJson(gatewayB, '/agent/steer', stack.apiKey, {
      session_id: sessionId,
      message: '还在吗',
    });
    expect(idle.status).toBe(409);
    expect(idle.body).toMatchObject({ error: { code: 'no_active_run' } });
  });
});

describe('disconnect and resume', () => {
  it('resumes on the other gateway with Last-Event-ID: the exact remaining frames, no gap, no duplicate', async () => {
    stack.fakeLlm.addScript({ match: { role: 'writer' }, responses: [slowReply(3)] });
    const response = await startRun(gatewayA, stack.apiKey, {
      project_id: stack.projectId,
      message: '写一小段',
    });
    const runId = response.headers.get('x-quill-run-id')!;
    const before = await firstFrames(response, 3);
    const lastId = before.frames.at(-1)!.id!;

    const resumed = await fetch(`${gatewayB}/api/v1/agent/runs/${runId}/stream`, {
      headers: { authorization: `Bearer ${stack.apiKey}`, 'last-event-id': lastId },
    });
    const after = await readStream(resumed);
    const full = await readStream(
      await fetch(`${gatewayB}/api/v1/agent/runs/${runId}/stream`, {
        headers: { authorization: `Bearer ${stack.apiKey}` },
      }),
    );
    const ids = (frames: ReceivedFrame[]) => frames.map((received) => received.id);
    expect([...ids(before.frames), ...ids(after.frames)]).toEqual(ids(full.frames));
    expect(frameTypes(full).slice(-2)).toEqual(['workflow_complete', 'done']);
    expect(terminals(full.frames)).toHaveLength(1);
  });

  it('stops a run as client_disconnected when nobody reconnects within the grace period', async () => {
    stack.fakeLlm.addScript({ match: { role: 'writer' }, responses: [slowReply(30)] });
    const controller = new AbortController();
    const response = await startRun(
      gatewayA,
      stack.apiKey,
      { project_id: stack.projectId, message: '写很长很长的一段' },
      { signal: controller.signal },
    );
    const runId = response.headers.get('x-quill-run-id')!;
    await firstFrames(response, 3);
    controller.abort();

    const run = await eventually(async () => {
      const current = await getJson(gatewayB, `/agent/runs/${runId}`, stack.apiKey);
      return current.body.phase === 'running' ? undefined : current.body;
    }, 30_000);
    expect(run).toMatchObject({ phase: 'done', stop_reason: 'client_disconnected' });
    const replay = await readStream(
      await fetch(`${gatewayB}/api/v1/agent/runs/${runId}/stream`, {
        headers: { authorization: `Bearer ${stack.apiKey}` },
      }),
    );
    expect(frameTypes(replay).at(-1)).toBe('done');
    expect(terminals(replay.frames).map((received) => received.frame)).toEqual([
      expect.objectContaining({ type: 'workflow_stopped', reason: 'client_disconnected' }),
    ]);
  });
});

describe('concurrency and tenancy', () => {
  it('limits concurrent runs per user with 429 too_many_active_runs', async () => {
    stack.fakeLlm.addScript({ match: { role: 'writer' }, responses: [slowReply(4), slowReply(4)] });
    const first = await startRun(gatewayA, stack.apiKey, { project_id: stack.projectId, message: '一' });
    const second = await startRun(gatewayB, stack.apiKey, { project_id: stack.projectId, message: '二' });
    const third = await startRun(gatewayA, stack.apiKey, { project_id: stack.projectId, message: '三' });
    expect([first.status, second.status]).toEqual([200, 200]);
    expect(third.status).toBe(429);
    expect(await third.json()).toMatchObject({ error: { code: 'too_many_active_runs' } });
    await Promise.all([readStream(first), readStream(second)]);
  });

  it('hides other tenants’ runs and sessions (404) and keeps viewers from starting runs (403)', async () => {
    const response = await startRun(gatewayA, stack.apiKey, { project_id: stack.projectId, message: '写' });
    const runId = response.headers.get('x-quill-run-id')!;
    const sessionId = response.headers.get('x-quill-session-id')!;
    await readStream(response);

    const stranger = await createUser(stack.pool, {
      email: `stranger-${runId}@quill.local`,
      displayName: 'Stranger',
    });
    const strangerKey = (await createApiKey(stack.pool, stranger.id, 'test')).key;
    expect((await getJson(gatewayB, `/agent/runs/${runId}`, strangerKey)).status).toBe(404);
    expect((await getJson(gatewayB, `/sessions/${sessionId}`, strangerKey)).status).toBe(404);
    expect((await postJson(gatewayB, '/agent/stop', strangerKey, { run_id: runId })).status).toBe(404);
    const resume = await fetch(`${gatewayB}/api/v1/agent/runs/${runId}/stream`, {
      headers: { authorization: `Bearer ${strangerKey}` },
    });
    expect(resume.status).toBe(404);
    const foreignSession = await startRun(gatewayA, strangerKey, {
      project_id: stack.projectId,
      session_id: sessionId,
      message: '偷看',
    });
    expect(foreignSession.status).toBe(404);

    await addProjectMember(stack.pool, stack.projectId, stranger.id, 'viewer');
    const asViewer = await startRun(gatewayA, strangerKey, { project_id: stack.projectId, message: '写' });
    expect(asViewer.status).toBe(403);

    const session = await getJson(gatewayA, `/sessions/${sessionId}`, stack.apiKey);
    // A session rests in the phase its last run ended in (docs/architecture.md "Phases").
    expect(session.body).toMatchObject({ session_id: sessionId, phase: 'done' });
  });

  it('accepts a short-lived token minted from an API key', async () => {
    const minted = await postJson(gatewayA, '/auth/token', undefined, { api_key: stack.apiKey });
    expect(minted.status).toBe(200);
    expect(minted.body).toMatchObject({ token_type: 'Bearer', expires_in: 900 });
    const session = await getJson(gatewayB, `/agent/runs/${crypto.randomUUID()}`, minted.body.access_token);
    expect(session.status).toBe(404);
    expect((await getJson(gatewayB, `/agent/runs/${crypto.randomUUID()}`, 'not-a-token')).status).toBe(401);
    expect(
      (await postJson(gatewayA, '/auth/token', undefined, { api_key: 'qk_wrong_key_here' })).status,
    ).toBe(401);
  });
});
