import { context, diag, metrics, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { CompositePropagator, W3CBaggagePropagator, W3CTraceContextPropagator } from '@opentelemetry/core';
import { PrometheusExporter } from '@opentelemetry/exporter-prometheus';
import { registerInstrumentations } from '@opentelemetry/instrumentation';
import {
  defaultResource,
  detectResources,
  hostDetector,
  processDetector,
  resourceFromAttributes,
} from '@opentelemetry/resources';
import { MeterProvider } from '@opentelemetry/sdk-metrics';
import {
  AlwaysOffSampler,
  BatchSpanProcessor,
  NoopSpanProcessor,
  ParentBasedSampler,
  type SpanExporter,
  type SpanProcessor,
  TraceIdRatioBasedSampler,
  TracerProvider,
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
 * Starts tracing and metrics and registers them globally. Without an endpoint a tracer is still
 * installed: trace ids then still travel in NATS headers and appear in every log line, so logs of
 * one run can be joined across services even where no collector runs.
 *
 * The SDK's parts are put together here rather than through `NodeSDK`: that package imports
 * every exporter it could build from the environment (gRPC, logs, Zipkin, ~40 MB of resident
 * memory in every service) and the service uses one trace exporter, loaded for its protocol only
 * ([0039](../../../docs/decisions/0039-telemetry-without-node-sdk.md)). The order is NodeSDK's:
 * instrumentations, context manager, propagator, meter provider, tracer provider.
 */
export async function startTelemetry(options: TelemetryOptions): Promise<TelemetryHandle> {
  const instrumentations = createInstrumentations();
  const exporter =
    options.exporter ??
    (options.endpoint
      ? await traceExporterFor(options.protocol ?? 'http/protobuf', options.endpoint)
      : undefined);
  const spanProcessor: SpanProcessor = exporter
    ? new BatchSpanProcessor({
        exporter: new ErrorStatusFilter(exporter),
        scheduledDelayMillis: options.scheduledDelayMillis ?? 200,
      })
    : new NoopSpanProcessor();
  // Served by the service's own ops port (libs/service-kit ops-server.ts), not a second server.
  const prometheus = new PrometheusExporter({ preventServerStart: true });

  registerInstrumentations({ instrumentations: instrumentations.all });
  const contextManager = new AsyncLocalStorageContextManager().enable();
  context.setGlobalContextManager(contextManager);
  propagation.setGlobalPropagator(
    new CompositePropagator({ propagators: [new W3CTraceContextPropagator(), new W3CBaggagePropagator()] }),
  );
  const resource = defaultResource()
    .merge(
      resourceFromAttributes({
        ...options.resourceAttributes,
        [ATTR_SERVICE_NAME]: options.serviceName,
        'service.instance.id': options.instanceId,
        ...(options.environment ? { 'deployment.environment.name': options.environment } : {}),
      }),
    )
    // Not the default set: its instance-id detector would replace ours with a random UUID.
    .merge(detectResources({ detectors: [hostDetector, processDetector] }))
    .merge(resourceFromAttributes({ [ATTR_SERVICE_NAME]: options.serviceName }));
  // Metrics are pulled by Prometheus.
  const meterProvider = new MeterProvider({ resource, readers: [prometheus] });
  metrics.setGlobalMeterProvider(meterProvider);
  for (const instrumentation of instrumentations.all) instrumentation.setMeterProvider(meterProvider);
  const tracerProvider = new TracerProvider({
    resource,
    // Nothing is exported without an exporter, so nothing is recorded either: spans that no one
    // will see cost every query and publish their attributes. Trace ids are still made and
    // propagated (non-recording spans carry them), so logs still join across services.
    sampler: exporter
      ? new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(options.samplerRatio ?? 1) })
      : new AlwaysOffSampler(),
    spanProcessors: [spanProcessor],
  });
  trace.setGlobalTracerProvider(tracerProvider);

  let shutdownPromise: Promise<void> | undefined;
  return {
    serviceName: options.serviceName,
    flush: () => spanProcessor.forceFlush().catch(reportExportFailure),
    shutdown: () => {
      shutdownPromise ??= Promise.all([tracerProvider.shutdown(), meterProvider.shutdown()])
        .then(() => undefined)
        .catch(reportExportFailure);
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
