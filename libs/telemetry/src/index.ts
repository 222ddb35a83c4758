export {
  type Attributes,
  type Context,
  type Span,
  SpanKind,
  SpanStatusCode,
  trace,
} from '@opentelemetry/api';
export {
  currentTelemetry,
  type FastifyOtelPlugin,
  fastifyOtelPlugin,
  flushTelemetry,
  installTelemetryHandle,
  shutdownTelemetry,
  type TelemetryHandle,
} from './handle.ts';
export {
  type CreateLoggerOptions,
  createLogger,
  type Logger,
  REDACTED_CENSOR,
  REDACTED_PATHS,
  type RunLogFields,
  runLogger,
} from './logger.ts';
export { asyncGauges, observedGauge, type QuillMetrics, quillMetrics } from './metrics.ts';
export { extractTraceContext, injectTraceHeaders } from './propagation.ts';
export { startTelemetry, type TelemetryOptions } from './sdk.ts';
export { resolveServiceName } from './service-name.ts';
export {
  activeTraceId,
  type MessagingOperation,
  natsSpanAttributes,
  type WithSpanOptions,
  withSpan,
} from './spans.ts';
