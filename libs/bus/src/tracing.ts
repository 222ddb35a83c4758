import { type MsgHdrs, headers as natsHeaders } from '@nats-io/transport-node';
import { type Context, SpanKind } from '@opentelemetry/api';
import { extractTraceContext, injectTraceHeaders, withSpan } from '@quill/telemetry';

export { SpanKind };

/** New NATS headers carrying the active trace context (`traceparent`). */
export function tracedHeaders(): MsgHdrs {
  const result = natsHeaders();
  injectTraceHeaders((key, value) => result.set(key, value));
  return result;
}

export function contextFromHeaders(headers: MsgHdrs | undefined): Context | undefined {
  if (!headers) return undefined;
  return extractTraceContext((key) => (headers.has(key) ? headers.get(key) : undefined));
}

export { withSpan };
