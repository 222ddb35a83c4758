import { type SpanContext, trace } from '@opentelemetry/api';
import type { Bus } from './connection.ts';
import { contextFromHeaders } from './tracing.ts';

/**
 * The span context a run's first frame (`run_started`) was published in: the run's trace. A stop
 * or steer request, its own HTTP trace, links to it so Jaeger leads from one to the other
 * (docs/operations.md "Traces"). Undefined when the run has no frame yet or the read fails.
 */
export async function runTraceContext(bus: Bus, runId: string): Promise<SpanContext | undefined> {
  try {
    const stored = await bus.jsm.streams.getMessage(bus.names.streams.events, {
      next_by_subj: bus.names.events(runId),
      seq: 1,
    } as never);
    const parent = stored ? contextFromHeaders(stored.header) : undefined;
    return parent ? trace.getSpanContext(parent) : undefined;
  } catch {
    return undefined;
  }
}
