import { diag } from '@opentelemetry/api';
import { CompositePropagator, W3CBaggagePropagator, W3CTraceContextPropagator } from '@opentelemetry/core';
import { PrometheusExporter } from '@opentelemetry/exporter-prometheus';
import {
  defaultResource,
  hostDetector,
  processDetector,
  resourceFromAttributes,
} from '@opentelemetry/resources';
import { NodeSDK } from '@opentelemetry/sdk-node';
import {
  AlwaysOffSampler,
  BatchSpanProcessor,
  NoopSpanProcessor,
  ParentBasedSampler,
  type SpanExporter,
  type SpanProcessor,
  TraceIdRatioBasedSampler,
} from '@opentelemetry/sdk-trace';
import { ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';
import { type OtlpProtocol, traceExporterFor } from './exporters.ts';
import type { FastifyOtelPlugin, TelemetryHandle } from './handle.ts';
import { createInstrumentations } from './instrumentations.ts';
import { ErrorStatusFilter } from './span-filters.ts';

export interface TelemetryOptions {
  serviceName: string;
  instanceId: string;
  /** `deployment.environment.name`, e.g. NODE_ENV. */
  environment?: string;
  /** Base OTLP URL (`/v1/traces` is appended for HTTP). Unset: spans exist but are not exported. */
  endpoint?: string;
  /** `OTEL_EXPORTER_OTLP_PROTOCOL`; `http/protobuf` (the spec's default) when omitted. */
  protocol?: OtlpProtocol;
  /** `OTEL_RESOURCE_ATTRIBUTES`, parsed; the service's own name and instance id win. */
  resourceAttributes?: Record<string, string>;
  /** Fraction of new traces sampled; a sampled parent's decision is always followed. */
  samplerRatio?: number;
  /** Replaces the OTLP exporter, e.g. an InMemorySpanExporter in tests. */
  exporter?: SpanExporter;
  /** Batch delay; short so a trace shows up in Jaeger (and in tests) while a run is still alive. */
  scheduledDelayMillis?: number;
}

/**
 * Starts the OpenTelemetry SDK and registers it globally. Without an endpoint a tracer is still
 * installed: trace ids then still travel in NATS headers and appear in every log line, so logs of
 * one run can be joined across services even where no collector runs.
 */
export function startTelemetry(options: TelemetryOptions): TelemetryHandle {
  const instrumentations = createInstrumentations();
  const exporter =
    options.exporter ??
    (options.endpoint ? traceExporterFor(options.protocol ?? 'http/protobuf', options.endpoint) : undefined);
  const spanProcessor: SpanProcessor = exporter
    ? new BatchSpanProcessor({
        exporter: new ErrorStatusFilter(exporter),
        scheduledDelayMillis: options.scheduledDelayMillis ?? 200,
      })
    : new NoopSpanProcessor();
  // Served by the service's own ops port (libs/service-kit ops-server.ts), not a second server.
  const prometheus = new PrometheusExporter({ preventServerStart: true });

  const sdk = new NodeSDK({
    serviceName: options.serviceName,
    resource: defaultResource().merge(
      resourceFromAttributes({
        ...options.resourceAttributes,
        [ATTR_SERVICE_NAME]: options.serviceName,
        'service.instance.id': options.instanceId,
        ...(options.environment ? { 'deployment.environment.name': options.environment } : {}),
      }),
    ),
    // Not the default set: its instance-id detector would replace ours with a random UUID.
    resourceDetectors: [hostDetector, processDetector],
    textMapPropagator: new CompositePropagator({
      propagators: [new W3CTraceContextPropagator(), new W3CBaggagePropagator()],
    }),
    // Nothing is exported without an exporter, so nothing is recorded either: spans that no one
    // will see cost every query and publish their attributes. Trace ids are still made and
    // propagated (non-recording spans carry them), so logs still join across services.
    sampler: exporter
      ? new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(options.samplerRatio ?? 1) })
      : new AlwaysOffSampler(),
    spanProcessors: [spanProcessor],
    // Metrics are pulled by Prometheus; the empty log list stops the SDK building exporters from env.
    metricReaders: [prometheus],
    logRecordProcessors: [],
    instrumentations: instrumentations.all,
  });
  sdk.start();

  let shutdownPromise: Promise<void> | undefined;
  return {
    serviceName: options.serviceName,
    flush: () => spanProcessor.forceFlush().catch(reportExportFailure),
    shutdown: () => {
      shutdownPromise ??= sdk.shutdown().catch(reportExportFailure);
      return shutdownPromise;
    },
    fastifyPlugin: (): FastifyOtelPlugin => instrumentations.fastify.plugin(),
    serveMetrics: (request, response) => prometheus.getMetricsRequestHandler(request, response),
  };
}

// An unreachable collector costs the spans, never the service (or its clean exit code).
function reportExportFailure(error: unknown): void {
  diag.warn('@quill/telemetry: span export failed', error);
}
