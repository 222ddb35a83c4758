import { isTerminalFrame } from '@quill/contracts';
import { listFiles, listFileVersions } from '@quill/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type OtlpReceiver, type ReceivedSpan, startOtlpReceiver } from '../support/otlp-receiver.ts';
import { frameTypes, readStream, startRun } from '../support/sse-client.ts';
import { type Stack, startStack } from '../support/stack.ts';

let stack: Stack;
let otlp: OtlpReceiver;

beforeAll(async () => {
  otlp = await startOtlpReceiver();
  stack = await startStack({ otlpEndpoint: otlp.endpoint });
});

afterAll(async () => {
  await stack?.stop();
  await otlp?.close();
});

describe('walking skeleton: one run through all six services', () => {
  it('streams a writer run to the author and saves the chapter with a version row', async () => {
    const response = await startRun(stack.gateways[0]!, stack.apiKey, {
      project_id: stack.projectId,
      message: '写第一章：雨夜里的旧书店',
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('x-accel-buffering')).toBe('no');
    const result = await readStream(response);
    const types = frameTypes(result);

    const order = [
      'run_started',
      'agent_start',
      'text',
      'tool_call',
      'tool_result',
      'file_start',
      'file_saved',
      'workflow_complete',
      'done',
    ];
    let cursor = -1;
    for (const type of order) {
      const index = types.indexOf(type as never, cursor + 1);
      expect(index, `${type} after position ${cursor} in ${types.join(',')}`).toBeGreaterThan(cursor);
      cursor = index;
    }
    expect(result.frames.filter((received) => isTerminalFrame(received.frame))).toHaveLength(1);
    expect(types.at(-1)).toBe('done');
    expect(types.at(-2)).toBe('workflow_complete');
    // Every frame carries its JetStream sequence as the SSE id, strictly increasing.
    const ids = result.frames.map((received) => Number(received.id));
    expect(ids.every((id, index) => Number.isInteger(id) && (index === 0 || id > ids[index - 1]!))).toBe(
      true,
    );
    // Tool call and its result share the tool_call_id (docs/agent-behaviour.md 坑 12).
    const call = result.frames.find((received) => received.frame.type === 'tool_call')!.frame;
    const toolResult = result.frames.find((received) => received.frame.type === 'tool_result')!.frame;
    expect(
      call.type === 'tool_call' &&
        toolResult.type === 'tool_result' &&
        call.tool_call_id === toolResult.tool_call_id,
    ).toBe(true);

    const saved = result.frames.find((received) => received.frame.type === 'file_saved')!.frame;
    if (saved.type !== 'file_saved') throw new Error('unreachable');
    const files = await listFiles(stack.pool, stack.projectId);
    const chapter = files.find((file) => file.id === saved.file_id)!;
    expect(chapter.content.length).toBe(saved.chars);
    expect(chapter.content.length).toBeGreaterThan(300);
    expect(chapter.content).not.toContain('<file>');
    const versions = await listFileVersions(stack.pool, chapter.id);
    expect(versions).toHaveLength(1);
    expect(versions[0]).toMatchObject({ source: 'ai', content: chapter.content });

    const runStarted = result.frames[0]!.frame;
    if (runStarted.type !== 'run_started') throw new Error('first frame must be run_started');
    const run = await stack.pool.query('SELECT phase, billing_decision FROM runs WHERE run_id = $1', [
      runStarted.run_id,
    ]);
    expect(run.rows[0]).toEqual({ phase: 'done', billing_decision: 'charge' });
    const messages = await stack.pool.query(
      'SELECT role FROM messages WHERE session_id = $1 ORDER BY created_at',
      [runStarted.session_id],
    );
    expect(messages.rows.map((row) => row.role)).toEqual(['user', 'assistant']);
  });

  it('refuses a second concurrent stream on the same session with 409 session_busy', async () => {
    stack.fakeLlm.addScript({
      match: { role: 'writer' },
      responses: [{ text: '慢慢地想。', ttft_ms: 1500 }],
    });
    const first = await startRun(stack.gateways[0]!, stack.apiKey, {
      project_id: stack.projectId,
      message: '继续写',
    });
    const firstFrames: Array<{ type: string; session_id?: string }> = [];
    const reading = readStream(first, { onFrame: (received) => firstFrames.push(received.frame as never) });
    while (firstFrames.length === 0) await new Promise((resolve) => setTimeout(resolve, 20));
    const sessionId = firstFrames[0]!.session_id!;

    const second = await startRun(stack.gateways[0]!, stack.apiKey, {
      project_id: stack.projectId,
      session_id: sessionId,
      message: '再写一章',
    });
    expect(second.status).toBe(409);
    expect(await second.json()).toMatchObject({ error: { code: 'session_busy' } });
    const finished = await reading;
    expect(frameTypes(finished).at(-1)).toBe('done');
  });

  it('answers 404 for a project the caller cannot see, 401 without a key, 400 naming the bad field', async () => {
    const gateway = stack.gateways[0]!;
    const unknown = await startRun(gateway, stack.apiKey, {
      project_id: '00000000-0000-4000-8000-000000000000',
      message: 'hi',
    });
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toMatchObject({ error: { code: 'not_found' } });

    const anonymous = await startRun(gateway, undefined, { project_id: stack.projectId, message: 'hi' });
    expect(anonymous.status).toBe(401);

    const wrongKey = await startRun(gateway, 'qk_not_a_key', { project_id: stack.projectId, message: 'hi' });
    expect(wrongKey.status).toBe(401);

    const malformed = await startRun(gateway, stack.apiKey, { project_id: 'not-a-uuid', message: '' });
    expect(malformed.status).toBe(400);
    const body = (await malformed.json()) as { error: { code: string; fields: Record<string, string[]> } };
    expect(body.error.code).toBe('invalid_request');
    expect(Object.keys(body.error.fields).sort()).toEqual(['message', 'project_id']);

    const notJson = await startRun(gateway, stack.apiKey, '{"project_id":');
    expect(notJson.status).toBe(400);
  });

  it('records the run as one trace across gateway, router, context, writer and billing', async () => {
    otlp.clear();
    const response = await startRun(stack.gateways[0]!, stack.apiKey, {
      project_id: stack.projectId,
      message: '写第二章',
    });
    const traceId = response.headers.get('x-quill-trace-id');
    expect(traceId).toMatch(/^[0-9a-f]{32}$/);
    const result = await readStream(response);
    expect(frameTypes(result).at(-1)).toBe('done');
    const isRoot = (span: ReceivedSpan) =>
      span.traceId === traceId &&
      span.serviceName === 'gateway' &&
      span.kind === 'server' &&
      span.parentSpanId === '';
    // Spans arrive in batches as each process ends them; the root ends last, with the stream.
    const expected = ['billing', 'context', 'gateway', 'router', 'writer'];
    const servicesInRootTrace = (all: ReceivedSpan[]) => {
      const root = all.find(isRoot);
      return new Set(all.filter((span) => span.traceId === root?.traceId).map((span) => span.serviceName));
    };
    const spans = await otlp
      .waitFor(
        (all) =>
          expected.every((service) => servicesInRootTrace(all).has(service)) &&
          all.some((span) => span.traceId === traceId && span.name === 'router run'),
        15_000,
      )
      .catch(() => otlp.spans());
    const root = spans.find(isRoot);
    expect(root, 'gateway HTTP server span is the root').toBeDefined();
    const inTrace = spans.filter((span) => span.traceId === root!.traceId);
    const services = new Set(inTrace.map((span) => span.serviceName));
    expect([...services].sort()).toEqual(['billing', 'context', 'gateway', 'router', 'writer']);
    // The writer's model call (fetch) and its database writes are part of the same trace.
    expect(inTrace.some((span) => span.serviceName === 'writer' && span.scope.includes('undici'))).toBe(true);
    expect(inTrace.some((span) => span.serviceName === 'writer' && span.scope.includes('pg'))).toBe(true);
  });
});
