import { InMemorySpanExporter } from '@opentelemetry/sdk-trace';
import type { TelemetryHandle } from './handle.ts';
import { startTelemetry } from './sdk.ts';

/**
 * The SDK as a service starts it (context manager, W3C propagation, tracer), exporting to memory,
 * for tests of other libs that need an active trace in-process (`@quill/telemetry/testing`):
 * what a publish or a request carries inside a span.
 */
export function startTestTelemetry(serviceName: string): Promise<TelemetryHandle> {
  return startTelemetry({ serviceName, instanceId: 'test-1', exporter: new InMemorySpanExporter() });
}
