export { SpanStatusCode, trace } from '@opentelemetry/api';
export { currentTelemetry, type FastifyOtelPlugin, fastifyOtelPlugin, shutdownTelemetry } from './handle.ts';
export { createLogger } from './logger.ts';
export { asyncGauges, observedGauge, observedStats, quillMetrics } from './metrics.ts';
export { extractTraceContext, injectTraceHeaders } from './propagation.ts';
export { activeTraceId, withSpan } from './spans.ts';
