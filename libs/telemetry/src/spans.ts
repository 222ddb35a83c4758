import {
  type Attributes,
  type Context,
  context,
  isSpanContextValid,
  type Link,
  type Span,
  SpanKind,
  SpanStatusCode,
  trace,
} from '@opentelemetry/api';

const TRACER_NAME = '@quill/telemetry';

export interface WithSpanOptions {
  /** PRODUCER for publish, CONSUMER for consume, CLIENT for request, SERVER for reply handling. */
  kind?: SpanKind;
  attributes?: Attributes;
  /** Parent context, e.g. from `extractTraceContext`; the active context when omitted. */
  parent?: Context;
  /** Other traces this work belongs to, e.g. a stop request's link to the run it stops. */
  links?: Link[];
}

/**
 * Runs `fn` inside an active span so everything it does (pg, redis, fetch, nested spans) joins
 * the same trace. A thrown error is recorded on the span, marks it failed, and is rethrown.
 */
export async function withSpan<T>(
  name: string,
  options: WithSpanOptions,
  fn: (span: Span) => Promise<T> | T,
): Promise<T> {
  const tracer = trace.getTracer(TRACER_NAME);
  const parent = options.parent ?? context.active();
  const spanOptions = {
    kind: options.kind ?? SpanKind.INTERNAL,
    attributes: options.attributes,
    ...(options.links ? { links: options.links } : {}),
  };
  return tracer.startActiveSpan(name, spanOptions, parent, async (span) => {
    try {
      // Success leaves the status unset (the spec's advice for instrumentation): an OK here would
      // be final and hide an ERROR that `fn` set for an outcome it returned rather than threw
      // (a run that ended `error(model_unavailable)`, docs/operations.md "Traces").
      return await fn(span);
    } catch (error) {
      span.recordException(error instanceof Error ? error : String(error));
      span.setStatus({
        code: SpanStatusCode.ERROR,
        message: error instanceof Error ? error.message : String(error),
      });
      throw error;
    } finally {
      span.end();
    }
  });
}

export type MessagingOperation = 'send' | 'receive' | 'process';

/** Semantic-convention attributes for a NATS span, so Jaeger groups them like other messaging. */
export function natsSpanAttributes(subject: string, operation: MessagingOperation): Attributes {
  return {
    'messaging.system': 'nats',
    'messaging.destination.name': subject,
    'messaging.operation.type': operation,
  };
}

/** The active trace id, for error logs and responses that point at a trace; undefined outside one. */
export function activeTraceId(): string | undefined {
  const spanContext = trace.getActiveSpan()?.spanContext();
  return spanContext && isSpanContextValid(spanContext) ? spanContext.traceId : undefined;
}
