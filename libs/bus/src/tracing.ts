import { type MsgHdrs, headers as natsHeaders } from '@nats-io/transport-node';
import { type Context, context, SpanKind } from '@opentelemetry/api';
import { extractTraceContext, injectTraceHeaders, withSpan } from '@quill/telemetry';

export { SpanKind };

// What the propagators write depends only on the context, and a worker publishes every frame of a
// step from the same one: inject once per context, not once per frame.
const injected = new WeakMap<Context, Array<[string, string]>>();

/** The active trace context's headers (`traceparent`), as the propagators write them. */
export function traceHeaderEntries(): ReadonlyArray<readonly [string, string]> {
  const active = context.active();
  let entries = injected.get(active);
  if (!entries) {
    const collected: Array<[string, string]> = [];
    injectTraceHeaders((key, value) => collected.push([key, value]), active);
    injected.set(active, collected);
    entries = collected;
  }
  return entries;
}

/** New NATS headers carrying the active trace context (`traceparent`). */
export function tracedHeaders(): MsgHdrs {
  const result = natsHeaders();
  for (const [key, value] of traceHeaderEntries()) result.set(key, value);
  return result;
}

export function contextFromHeaders(headers: MsgHdrs | undefined): Context | undefined {
  if (!headers) return undefined;
  return extractTraceContext((key) => (headers.has(key) ? headers.get(key) : undefined));
}

export { withSpan };
