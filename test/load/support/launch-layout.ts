import type { ReceivedSpan } from '../../support/otlp-receiver.ts';
import { distribution } from './stats.ts';

/** Where one span of a launch's trace sits: its start after the gateway's request span, and its length (ms). */
export interface SpanRow {
  offset: number;
  duration: number;
}

/** The gateway's span of `POST /agent/stream`: a launch's trace starts there. */
export function isRequest(span: ReceivedSpan): boolean {
  return span.serviceName === 'gateway' && span.kind === 'server';
}

/** The writer's model request: the launch ends there. */
export function isModelCall(span: ReceivedSpan): boolean {
  return span.serviceName === 'writer' && span.kind === 'client' && /POST/.test(span.name);
}

/** Each span's offset from the gateway's request span, up to the model call. */
export function layout(spans: ReceivedSpan[]): Map<string, SpanRow> {
  // The newest model call: the previous run's last spans may still arrive after clear().
  const model = spans.filter(isModelCall).sort((a, b) => b.startMs - a.startMs)[0];
  const root = spans.find((span) => isRequest(span) && span.traceId === model?.traceId);
  const rows = new Map<string, SpanRow>();
  if (!root || !model) return rows;
  const seen = new Map<string, number>();
  for (const span of [...spans].sort((a, b) => a.startMs - b.startMs)) {
    if (span.traceId !== root.traceId || span.startMs > model.startMs) continue;
    const name = `${span.serviceName} ${span.name}`;
    const occurrence = (seen.get(name) ?? 0) + 1;
    seen.set(name, occurrence);
    rows.set(occurrence > 1 ? `${name} #${occurrence}` : name, {
      offset: span.startMs - root.startMs,
      duration: span.endMs - span.startMs,
    });
  }
  return rows;
}

/** Per span name: in how many runs it appeared, its median offset and duration; by offset. */
export function summarizeLayouts(layouts: ReadonlyArray<Map<string, SpanRow>>) {
  const names = new Map<string, number>();
  for (const rows of layouts) {
    for (const [name, row] of rows) names.set(name, Math.min(names.get(name) ?? Infinity, row.offset));
  }
  return (
    [...names.keys()]
      .map((name) => {
        const present = layouts.map((rows) => rows.get(name)).filter((row) => row !== undefined);
        return {
          span: name,
          in_runs: present.length,
          offset_p50: distribution(present.map((row) => row.offset)).p50,
          duration_p50: distribution(present.map((row) => row.duration)).p50,
        };
      })
      // Spans in most runs only: a stray housekeeping span would otherwise add noise rows.
      .filter((row) => row.in_runs >= layouts.length / 2)
      .sort((a, b) => a.offset_p50 - b.offset_p50)
  );
}
