import { isSpanContextValid, trace } from '@opentelemetry/api';
import { type DestinationStream, type Logger, type LoggerOptions as PinoOptions, pino } from 'pino';

export type { Logger } from 'pino';

/**
 * Keys that carry credentials wherever they appear in a log object, at the top level or one level
 * down (`{ provider: { apiKey } }`). Deeper nesting is not covered: log ids, not config trees.
 */
const SECRET_KEYS = ['apiKey', 'api_key', 'authorization', 'password', 'token', 'key', 'secret', 'cookie'];

export const REDACTED_PATHS: readonly string[] = [
  ...SECRET_KEYS,
  ...SECRET_KEYS.map((key) => `*.${key}`),
  'headers.authorization',
  'headers.cookie',
  'headers["x-api-key"]',
  '*.headers.authorization',
  '*.headers.cookie',
  '*.headers["x-api-key"]',
];

export const REDACTED_CENSOR = '[redacted]';

export interface CreateLoggerOptions {
  service: string;
  /** pino level name; `silent` turns logging off (tests). */
  level?: string;
  instanceId: string;
  /** Where JSON lines go; stdout when omitted. Tests pass an in-memory stream. */
  destination?: DestinationStream;
}

export function createLogger(options: CreateLoggerOptions): Logger {
  const pinoOptions: PinoOptions = {
    level: options.level ?? 'info',
    base: { service: options.service, instance: options.instanceId },
    redact: { paths: [...REDACTED_PATHS], censor: REDACTED_CENSOR },
    timestamp: pino.stdTimeFunctions.isoTime,
    // A level name survives log shippers that do not know pino's numeric levels.
    formatters: { level: (label) => ({ level: label }) },
    mixin: activeTraceFields,
  };
  return options.destination ? pino(pinoOptions, options.destination) : pino(pinoOptions);
}

/** Lets a log line be found from a Jaeger trace and the other way round. */
function activeTraceFields(): Record<string, string> {
  const spanContext = trace.getActiveSpan()?.spanContext();
  if (!spanContext || !isSpanContextValid(spanContext)) return {};
  return { trace_id: spanContext.traceId, span_id: spanContext.spanId };
}

export interface RunLogFields {
  runId: string;
  sessionId?: string;
  requestId?: string;
}

/** A child logger whose every line names the run it belongs to. */
export function runLogger(logger: Logger, fields: RunLogFields): Logger {
  const bindings: Record<string, string> = { run_id: fields.runId };
  if (fields.sessionId !== undefined) bindings.session_id = fields.sessionId;
  if (fields.requestId !== undefined) bindings.request_id = fields.requestId;
  return logger.child(bindings);
}
