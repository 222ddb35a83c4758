import { SpanStatusCode } from '@opentelemetry/api';
import type { ExportResult } from '@opentelemetry/core';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace';

/**
 * Errors that are part of a normal protocol exchange, not failures: ioredis sends EVALSHA, gets
 * `NOSCRIPT` the first time a script meets a server (or after SCRIPT FLUSH / a failover) and
 * loads the script at once. Shown as error spans they bury the real failures in Jaeger
 * (docs/operations.md "Traces").
 */
function isExpectedError(span: ReadableSpan): boolean {
  return (
    span.status.code === SpanStatusCode.ERROR &&
    span.instrumentationScope.name.includes('ioredis') &&
    (span.status.message ?? '').startsWith('NOSCRIPT')
  );
}

/** Spans as exported: an expected error keeps its span but loses the ERROR status and exception. */
export class ErrorStatusFilter implements SpanExporter {
  readonly #inner: SpanExporter;
  constructor(inner: SpanExporter) {
    this.#inner = inner;
  }

  export(spans: ReadableSpan[], resultCallback: (result: ExportResult) => void): void {
    this.#inner.export(spans.map(cleaned), resultCallback);
  }

  shutdown(): Promise<void> {
    return this.#inner.shutdown();
  }

  forceFlush(): Promise<void> {
    return this.#inner.forceFlush?.() ?? Promise.resolve();
  }
}

function cleaned(span: ReadableSpan): ReadableSpan {
  if (!isExpectedError(span)) return span;
  // The span itself is frozen once ended; a view over it changes only what is exported.
  return Object.create(span, {
    status: { value: { code: SpanStatusCode.UNSET } },
    events: { value: span.events.filter((event) => event.name !== 'exception') },
  }) as ReadableSpan;
}
