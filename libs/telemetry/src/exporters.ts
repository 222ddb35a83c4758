import { OTLPTraceExporter as GrpcTraceExporter } from '@opentelemetry/exporter-trace-otlp-grpc';
import { OTLPTraceExporter as JsonTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as ProtoTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import type { SpanExporter } from '@opentelemetry/sdk-trace';

export type OtlpProtocol = 'http/protobuf' | 'http/json' | 'grpc';

/**
 * The trace exporter for `OTEL_EXPORTER_OTLP_PROTOCOL` (the spec's values and default). HTTP
 * appends `/v1/traces` to the base endpoint as the spec says; gRPC takes the endpoint as is.
 */
export function traceExporterFor(protocol: OtlpProtocol, endpoint: string): SpanExporter {
  if (protocol === 'grpc') return new GrpcTraceExporter({ url: endpoint });
  const url = new URL('v1/traces', endpoint.endsWith('/') ? endpoint : `${endpoint}/`).toString();
  return protocol === 'http/json' ? new JsonTraceExporter({ url }) : new ProtoTraceExporter({ url });
}

/**
 * `OTEL_RESOURCE_ATTRIBUTES` (`key=value,…`, values percent-encoded per the spec). A malformed
 * pair is skipped, not fatal: a typo in a label must not stop a service.
 */
export function parseResourceAttributes(value: string): Record<string, string> {
  const attributes: Record<string, string> = {};
  for (const pair of value.split(',')) {
    const separator = pair.indexOf('=');
    if (separator <= 0) continue;
    const key = pair.slice(0, separator).trim();
    try {
      attributes[key] = decodeURIComponent(pair.slice(separator + 1).trim());
    } catch {
      // Undecodable value: skipped like any malformed pair.
    }
  }
  return attributes;
}
