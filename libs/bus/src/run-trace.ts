import { type SpanContext, trace } from '@opentelemetry/api';
import type { Bus } from './connection.ts';
import { contextFromHeaders } from './tracing.ts';

/**
 * The trace a run runs in: a stop or steer request, its own HTTP trace, links to it so Jaeger
 * leads from one to the other (docs/operations.md "Traces"). Read from the newest record the run
 * stored with a trace: its newest step record, or before its first dispatch its newest frame
 * (the launch's `run_started` and the router's frames carry their trace; streamed text does not,
 * docs/decisions/0049). Each is one direct get from the stream's end (`last_by_subj`). Reading the
 * run's first frame instead, by sequence from 1, made nats-server look through every older block
 * of EVENTS (a day of every run's frames) before a stop could go out (docs/decisions/0076).
 * Undefined when neither carries a trace or the read fails: the link is for operators, and a stop
 * never waits on it failing.
 */
export async function runTraceContext(bus: Bus, runId: string): Promise<SpanContext | undefined> {
  try {
    for (const subject of [bus.names.steps(runId), bus.names.events(runId)]) {
      const stored = await bus.jsm.streams.getMessage(bus.names.streams.events, { last_by_subj: subject });
      const parent = stored ? contextFromHeaders(stored.header) : undefined;
      const span = parent ? trace.getSpanContext(parent) : undefined;
      if (span) return span;
    }
    return undefined;
  } catch {
    return undefined;
  }
}
