import { SpanKind, trace } from '@opentelemetry/api';
import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { TelemetryHandle } from '../src/handle.ts';
import {
  createLogger,
  extractTraceContext,
  injectTraceHeaders,
  SpanStatusCode,
  withSpan,
} from '../src/index.ts';
import { startTelemetry } from '../src/sdk.ts';
import { resolveServiceName } from '../src/service-name.ts';
import { natsSpanAttributes } from '../src/spans.ts';

const exporter = new InMemorySpanExporter();
let telemetry: TelemetryHandle;

beforeAll(async () => {
  telemetry = await startTelemetry({ serviceName: 'telemetry-test', instanceId: 'test-1', exporter });
});
afterAll(async () => {
  await telemetry.shutdown();
});
beforeEach(() => {
  exporter.reset();
});

async function finished(name: string): Promise<ReadableSpan> {
  await telemetry.flush();
  const span = exporter.getFinishedSpans().find((candidate) => candidate.name === name);
  if (!span) throw new Error(`no finished span named ${name}`);
  return span;
}

describe('trace propagation through message headers', () => {
  it('round-trips the trace id from a producer span to a consumer span', async () => {
    const headers = new Map<string, string>();
    const producerTraceId = await withSpan(
      'publish run.start',
      { kind: SpanKind.PRODUCER, attributes: natsSpanAttributes('run.start.r1', 'send') },
      (span) => {
        injectTraceHeaders((key, value) => headers.set(key, value));
        return span.spanContext().traceId;
      },
    );
    expect(headers.get('traceparent')).toContain(producerTraceId);

    const parent = extractTraceContext((key) => headers.get(key));
    expect(trace.getSpanContext(parent)?.traceId).toBe(producerTraceId);
    await withSpan('consume run.start', { kind: SpanKind.CONSUMER, parent }, () => undefined);

    const producer = await finished('publish run.start');
    const consumer = await finished('consume run.start');
    expect(consumer.spanContext().traceId).toBe(producerTraceId);
    expect(consumer.parentSpanContext?.spanId).toBe(producer.spanContext().spanId);
    expect(producer.kind).toBe(SpanKind.PRODUCER);
    expect(consumer.kind).toBe(SpanKind.CONSUMER);
    expect(producer.attributes['messaging.destination.name']).toBe('run.start.r1');
  });

  it('extracts the root context when there are no trace headers', async () => {
    const context = extractTraceContext(() => undefined);
    expect(trace.getSpanContext(context)).toBeUndefined();
    await withSpan('orphan', { parent: context }, () => undefined);
    expect((await finished('orphan')).parentSpanContext).toBeUndefined();
  });

  it('injects nothing outside a span', () => {
    const headers = new Map<string, string>();
    injectTraceHeaders((key, value) => headers.set(key, value));
    expect(headers.has('traceparent')).toBe(false);
  });
});

describe('withSpan', () => {
  it('nests spans started inside it and leaves a success unset', async () => {
    await withSpan('outer', {}, () => withSpan('inner', { kind: SpanKind.CLIENT }, () => 'done'));
    const outer = await finished('outer');
    const inner = await finished('inner');
    expect(inner.parentSpanContext?.spanId).toBe(outer.spanContext().spanId);
    expect(outer.status.code).toBe(SpanStatusCode.UNSET);
  });

  it('keeps an ERROR that the function set for an outcome it returned', async () => {
    await withSpan('failed run', {}, (span) => {
      span.setStatus({ code: SpanStatusCode.ERROR, message: 'model_unavailable' });
      return 'ended';
    });
    const span = await finished('failed run');
    expect(span.status).toEqual({ code: SpanStatusCode.ERROR, message: 'model_unavailable' });
  });

  it('records a thrown error, marks the span failed and rethrows', async () => {
    await expect(
      withSpan('failing', { kind: SpanKind.SERVER }, () => {
        throw new Error('context compile failed');
      }),
    ).rejects.toThrow('context compile failed');
    const span = await finished('failing');
    expect(span.status).toEqual({ code: SpanStatusCode.ERROR, message: 'context compile failed' });
    expect(span.events.map((event) => event.name)).toContain('exception');
    expect(span.ended).toBe(true);
  });

  it('puts the active trace and span ids on log lines', async () => {
    const lines: Array<Record<string, unknown>> = [];
    const logger = createLogger({
      service: 's',
      instanceId: 'i',
      destination: { write: (line: string) => void lines.push(JSON.parse(line)) },
    });
    const ids = await withSpan('logged', {}, (span) => {
      logger.info('inside');
      return span.spanContext();
    });
    expect(lines[0]).toMatchObject({ trace_id: ids.traceId, span_id: ids.spanId });
  });
});

describe('resolveServiceName', () => {
  it('prefers configuration, then the entry file, then a fallback', () => {
    expect(resolveServiceName('custom', '/app/services/writer/src/main.ts')).toBe('custom');
    expect(resolveServiceName(undefined, '/app/services/writer/src/main.ts')).toBe('quill-writer');
    expect(resolveServiceName(undefined, '/app/test/fake-llm/src/main.ts')).toBe('quill-fake-llm');
    expect(resolveServiceName(undefined, '/app/scripts/migrate.ts')).toBe('quill');
    expect(resolveServiceName(undefined, undefined)).toBe('quill');
  });
});
