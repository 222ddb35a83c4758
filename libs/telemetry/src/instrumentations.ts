import type { IncomingMessage } from 'node:http';
import { FastifyOtelInstrumentation } from '@fastify/otel';
import type { Instrumentation } from '@opentelemetry/instrumentation';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { IORedisInstrumentation } from '@opentelemetry/instrumentation-ioredis';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import { RuntimeNodeInstrumentation } from '@opentelemetry/instrumentation-runtime-node';
import { UndiciInstrumentation } from '@opentelemetry/instrumentation-undici';

export interface QuillInstrumentations {
  /** Everything the SDK must enable, the fastify one included. */
  readonly all: Instrumentation[];
  /** Registered as a plugin by the gateway (`fastifyOtelPlugin()`), not by module patching. */
  readonly fastify: FastifyOtelInstrumentation;
}

// Load balancer and compose health probes would otherwise be most of the traces in Jaeger.
function isHealthCheck(path: string | undefined): boolean {
  return path !== undefined && /\/health(\?|$)/.test(path);
}

export function createInstrumentations(): QuillInstrumentations {
  const fastify = new FastifyOtelInstrumentation({
    ignorePaths: (route) => isHealthCheck(route.url),
  });
  const all: Instrumentation[] = [
    new HttpInstrumentation({
      ignoreIncomingRequestHook: (request: IncomingMessage) => isHealthCheck(request.url),
    }),
    // The openai SDK calls models through global fetch, which is undici.
    new UndiciInstrumentation(),
    // Lock renewals and pool housekeeping outside any run would each start a lone trace.
    new PgInstrumentation({ requireParentSpan: true, ignoreConnectSpans: true }),
    new IORedisInstrumentation({ requireParentSpan: true }),
    // The event loop's delay (how late a ready callback ran: what queues a frame inside a
    // process), its utilisation, the garbage collector's pauses and the heap, on `/metrics`
    // (docs/operations.md "Metrics"). The delay is sampled by a 10-ms timer: each figure is the
    // time between two ticks, so an idle loop reads 0.01 s, and the percentiles are of the
    // samples since the previous scrape.
    new RuntimeNodeInstrumentation({ monitoringPrecision: 10 }),
    fastify,
  ];
  return { all, fastify };
}
