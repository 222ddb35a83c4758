import { SpanStatusCode } from '@opentelemetry/api';
import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace';
import { describe, expect, it } from 'vitest';
import { parseResourceAttributes, traceExporterFor } from '../src/exporters.ts';
import { ErrorStatusFilter } from '../src/span-filters.ts';

function spanOf(scope: string, status: { code: SpanStatusCode; message?: string }): ReadableSpan {
  return {
    name: 'evalsha',
    status,
    instrumentationScope: { name: scope },
    events: [{ name: 'exception', time: [0, 0], attributes: {} }],
  } as unknown as ReadableSpan;
}

function exported(span: ReadableSpan): ReadableSpan {
  const memory = new InMemorySpanExporter();
  new ErrorStatusFilter(memory).export([span], () => undefined);
  return memory.getFinishedSpans()[0]!;
}

describe('ErrorStatusFilter', () => {
  it('exports an ioredis NOSCRIPT (EVALSHA before the script is loaded) as no error', () => {
    const span = exported(
      spanOf('@opentelemetry/instrumentation-ioredis', {
        code: SpanStatusCode.ERROR,
        message: 'NOSCRIPT No matching script. Please use EVAL.',
      }),
    );
    expect(span.status.code).toBe(SpanStatusCode.UNSET);
    expect(span.events).toEqual([]);
    expect(span.name).toBe('evalsha');
  });

  it('keeps every other error as it is', () => {
    const redisDown = spanOf('@opentelemetry/instrumentation-ioredis', {
      code: SpanStatusCode.ERROR,
      message: 'Connection is closed.',
    });
    expect(exported(redisDown)).toBe(redisDown);
    const pgNoScript = spanOf('@opentelemetry/instrumentation-pg', {
      code: SpanStatusCode.ERROR,
      message: 'NOSCRIPT',
    });
    expect(exported(pgNoScript)).toBe(pgNoScript);
  });
});

describe('parseResourceAttributes (OTEL_RESOURCE_ATTRIBUTES)', () => {
  it('reads key=value pairs, percent-decoded, and skips malformed ones', () => {
    expect(parseResourceAttributes('k8s.pod.name=writer-0, team=ai%20ops,broken,=x,bad=%E0%A4%A')).toEqual({
      'k8s.pod.name': 'writer-0',
      team: 'ai ops',
    });
    expect(parseResourceAttributes('')).toEqual({});
  });
});

describe('traceExporterFor (OTEL_EXPORTER_OTLP_PROTOCOL)', () => {
  it("builds each protocol's exporter from that protocol's package", async () => {
    const grpc = await import('@opentelemetry/exporter-trace-otlp-grpc');
    const json = await import('@opentelemetry/exporter-trace-otlp-http');
    const proto = await import('@opentelemetry/exporter-trace-otlp-proto');
    const endpoint = 'http://127.0.0.1:4318';
    const made = await Promise.all([
      traceExporterFor('grpc', endpoint),
      traceExporterFor('http/json', endpoint),
      traceExporterFor('http/protobuf', endpoint),
    ]);
    expect(made[0]).toBeInstanceOf(grpc.OTLPTraceExporter);
    expect(made[1]).toBeInstanceOf(json.OTLPTraceExporter);
    expect(made[2]).toBeInstanceOf(proto.OTLPTraceExporter);
    expect(made[1]).not.toBeInstanceOf(proto.OTLPTraceExporter);
    await Promise.all(made.map((exporter) => exporter.shutdown()));
  });
});
