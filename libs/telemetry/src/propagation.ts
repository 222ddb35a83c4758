import { type Context, context, propagation, ROOT_CONTEXT } from '@opentelemetry/api';

/**
 * Writes the W3C `traceparent` / `tracestate` of `from` (the active context by default) through
 * `setter`, so any message library's header object can carry a trace without this lib knowing it.
 */
export function injectTraceHeaders(
  setter: (key: string, value: string) => void,
  from: Context = context.active(),
): void {
  propagation.inject(from, null, {
    set: (_carrier, key, value) => setter(key, value),
  });
}

/**
 * Reads trace headers through `getter` into a Context to use as a span parent. The base is the
 * root context, not the active one: a consumed message continues the producer's trace, not
 * whatever the consumer loop happened to be running in.
 */
export function extractTraceContext(
  getter: (key: string) => string | undefined,
  base: Context = ROOT_CONTEXT,
): Context {
  return propagation.extract(base, null, {
    get: (_carrier, key) => getter(key),
    keys: () => [],
  });
}
