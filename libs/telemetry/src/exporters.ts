import type { SpanExporter } from '@opentelemetry/sdk-trace';

export type OtlpProtocol = 'http/protobuf' | 'http/json' | 'grpc';

/**
 * The trace exporter for `OTEL_EXPORTER_OTLP_PROTOCOL` (the spec's values and default). HTTP
 * appends `/v1/traces` to the base endpoint as the spec says; gRPC takes the endpoint as is.
 * Only the protocol's own package is imported: the gRPC one alone is ~30 MB resident.
 */
export async function traceExporterFor(protocol: OtlpProtocol, endpoint: string): Promise<SpanExporter> {
  if (protocol === 'grpc') {
    const { OTLPTraceExporter } = await import('@opentelemetry/exporter-trace-otlp-grpc');
    return new OTLPTraceExporter({ url: endpoint });
  }
  const url = new URL('v1/traces', endpoint.endsWith('/') ? endpoint : `${endpoint}/`).toString();
  if (protocol === 'http/json') {
    const { OTLPTraceExporter } = await import('@opentelemetry/exporter-trace-otlp-http');
    return new OTLPTraceExporter({ url });
  }
  const { OTLPTraceExporter } = await import('@opentelemetry/exporter-trace-otlp-proto');
  return new OTLPTraceExporter({ url });
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
