import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, postJson, slowReply } from '../support/api.ts';
import { type OtlpReceiver, type ReceivedSpan, startOtlpReceiver } from '../support/otlp-receiver.ts';
import { frameTypes, type ReceivedFrame, readStream, startRun } from '../support/sse-client.ts';
import { type Stack, startStack } from '../support/stack.ts';

// What an operator reads in Jaeger (docs/operations.md "Traces"): run attributes on spans, GenAI
// attributes on model spans, ERROR for a failed run, a stop request linked to its run's trace.
let stack: Stack;
let otlp: OtlpReceiver;

beforeAll(async () => {
  otlp = await startOtlpReceiver();
  stack = await startStack({
    otlpEndpoint: otlp.endpoint,
    env: {
      OTEL_RESOURCE_ATTRIBUTES: 'k8s.namespace.name=quill-test,deployment.region=eu%2Dwest',
      GATEWAY_RATE_LIMIT_PER_MINUTE: '1000',
    },
  });
});

afterAll(async () => {
  await stack?.stop();
  await otlp?.close();
});

async function runToEnd(message: string) {
  const response = await startRun(stack.gateways[0]!, stack.apiKey, { project_id: stack.projectId, message });
  expect(response.status).toBe(200);
  const runId = response.headers.get('x-quill-run-id')!;
  const traceId = response.headers.get('x-quill-trace-id')!;
  const result = await readStream(response);
  expect(frameTypes(result).at(-1)).toBe('done');
  return { runId, traceId, result };
}

const routerRunSpan = (runId: string) => (spans: ReceivedSpan[]) =>
  spans.find((span) => span.name === 'router run' && span.attributes['quill.run_id'] === runId);

describe('run traces', () => {
  it('puts GenAI usage and finish reasons on model spans and tool names on tool spans', async () => {
    const { runId, traceId } = await runToEnd('写第一章：雨夜里的旧书店');
    const spans = await otlp.waitFor(
      (received) =>
        received.some(
          (span) =>
            span.name.startsWith('chat ') &&
            span.attributes['quill.run_id'] === runId &&
            span.attributes['quill.role'] === 'writer' &&
            span.attributes['gen_ai.usage.output_tokens'] !== undefined,
        ) &&
        received.some(
          (span) => span.name.startsWith('execute_tool ') && span.attributes['quill.run_id'] === runId,
        ),
    );
    const model = spans.find(
      (span) =>
        span.name.startsWith('chat ') &&
        span.serviceName === 'writer' &&
        span.attributes['quill.run_id'] === runId &&
        span.attributes['gen_ai.usage.output_tokens'] !== undefined,
    )!;
    expect(model).toMatchObject({ kind: 'client', traceId, serviceName: 'writer' });
    expect(model.attributes).toMatchObject({
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'primary',
      'quill.role': 'writer',
    });
    expect(typeof model.attributes['gen_ai.request.model']).toBe('string');
    expect(model.attributes['gen_ai.usage.input_tokens']).toBeGreaterThan(0);
    expect(model.attributes['gen_ai.usage.output_tokens']).toBeGreaterThan(0);
    expect(Array.isArray(model.attributes['gen_ai.response.finish_reasons'])).toBe(true);
    // The model call's HTTP request (undici's request API, not fetch) is its child span.
    const request = await otlp.waitFor((received) =>
      received.some((span) => span.parentSpanId === model.spanId && span.name === 'POST'),
    );
    expect(request.find((span) => span.parentSpanId === model.spanId && span.name === 'POST')).toMatchObject({
      kind: 'client',
      traceId,
      serviceName: 'writer',
      scope: '@opentelemetry/instrumentation-undici',
    });
    // And the provider receives the run's trace context with it.
    const sent = await stack.fakeLlm.requests({ run_id: runId, role: 'writer' });
    expect(sent.length).toBeGreaterThan(0);
    expect(sent.every((each) => each.headers.traceparent?.split('-')[1] === traceId)).toBe(true);
    const tool = spans.find(
      (span) => span.name.startsWith('execute_tool ') && span.attributes['quill.run_id'] === runId,
    )!;
    expect(tool.attributes['gen_ai.tool.name']).toBe(tool.name.slice('execute_tool '.length));
    // OTEL_RESOURCE_ATTRIBUTES reaches every service's resource; the service name stays its own.
    expect(model.resource).toMatchObject({
      'k8s.namespace.name': 'quill-test',
      'deployment.region': 'eu-west',
    });
    // OTEL_EXPORTER_OTLP_PROTOCOL=http/json (the stack sets it) is what the exporter sent.
    expect(otlp.traceContentTypes().every((type) => type.includes('application/json'))).toBe(true);
    // A completed run has no error span anywhere in its trace.
    const errors = spans.filter((span) => span.traceId === traceId && span.status.code === 'error');
    expect(errors.map((span) => `${span.serviceName}:${span.name}:${span.status.message}`)).toEqual([]);
  });

  it('marks a failed run ERROR with its error code on the router and on the failed model call', async () => {
    stack.fakeLlm.addScript({
      match: { role: 'writer' },
      responses: Array.from({ length: 8 }, () => ({ error: { status: 500 } })),
    });
    const { runId, result } = await runToEnd('写第二章');
    const errorFrame = result.frames.find(
      (received: ReceivedFrame) => received.frame.type === 'error',
    )!.frame;
    if (errorFrame.type !== 'error') throw new Error('the run must end with an error frame');
    const spans = await otlp.waitFor(
      (received) => routerRunSpan(runId)(received)?.status.code === 'error',
      20_000,
    );
    const router = routerRunSpan(runId)(spans)!;
    expect(router.status.message).toBe(errorFrame.code);
    expect(router.attributes).toMatchObject({
      'error.type': errorFrame.code,
      'quill.run.terminal': 'error',
    });
    const failedCall = await otlp.waitFor((received) =>
      received.some(
        (span) =>
          span.name.startsWith('chat ') &&
          span.attributes['quill.run_id'] === runId &&
          span.status.code === 'error',
      ),
    );
    expect(failedCall.length).toBeGreaterThan(0);
    // The writer's step span says the step failed, with the same code.
    const step = await otlp.waitFor((received) =>
      received.some(
        (span) =>
          span.name === 'writer step' &&
          span.attributes['quill.run_id'] === runId &&
          span.status.code === 'error',
      ),
    );
    const writerStep = step.find(
      (span) => span.name === 'writer step' && span.attributes['quill.run_id'] === runId,
    )!;
    expect(writerStep.attributes).toMatchObject({ 'quill.role': 'writer', 'quill.step.outcome': 'failed' });
    // What the failed run left of its script must not fail the next test's run.
    stack.fakeLlm.clearScripts();
  });

  it('links stop and steer requests to the trace of the run; a stopped run is not an error', async () => {
    stack.fakeLlm.addScript({ match: { role: 'writer' }, responses: [slowReply(20)] });
    const response = await startRun(stack.gateways[0]!, stack.apiKey, {
      project_id: stack.projectId,
      message: '写一段很长的开头',
    });
    const runId = response.headers.get('x-quill-run-id')!;
    const traceId = response.headers.get('x-quill-trace-id')!;
    const frames: ReceivedFrame[] = [];
    const reading = readStream(response, { onFrame: (received) => frames.push(received) });
    await eventually(async () =>
      frames.some((received) => received.frame.type === 'text') ? true : undefined,
    );
    const sessionId = response.headers.get('x-quill-session-id')!;
    const steer = await postJson(stack.gateways[0]!, '/agent/steer', stack.apiKey, {
      session_id: sessionId,
      message: '节奏再快一点',
    });
    expect(steer.status).toBe(202);
    expect((await postJson(stack.gateways[0]!, '/agent/stop', stack.apiKey, { run_id: runId })).status).toBe(
      202,
    );
    await reading;

    const spans = await otlp.waitFor(
      (received) =>
        received.some((span) => span.name === 'run stop' && span.attributes['quill.run_id'] === runId) &&
        routerRunSpan(runId)(received) !== undefined,
      20_000,
    );
    const stop = spans.find((span) => span.name === 'run stop' && span.attributes['quill.run_id'] === runId)!;
    expect(stop.traceId).not.toBe(traceId);
    expect(stop.links.map((link) => link.traceId)).toContain(traceId);
    expect(stop.attributes['quill.stop_reason']).toBe('user_stopped');
    const steered = await otlp.waitFor((received) =>
      received.some((span) => span.name === 'run steer' && span.attributes['quill.run_id'] === runId),
    );
    const steerSpan = steered.find(
      (span) => span.name === 'run steer' && span.attributes['quill.run_id'] === runId,
    )!;
    expect(steerSpan.traceId).not.toBe(traceId);
    expect(steerSpan.links.map((link) => link.traceId)).toContain(traceId);
    const router = routerRunSpan(runId)(spans)!;
    expect(router.attributes).toMatchObject({
      'quill.run.terminal': 'stopped',
      'quill.stop_reason': 'user_stopped',
    });
    const errors = spans.filter((span) => span.traceId === traceId && span.status.code === 'error');
    expect(errors.map((span) => `${span.serviceName}:${span.name}:${span.status.message}`)).toEqual([]);
  });
});
