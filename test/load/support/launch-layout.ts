import type { ReceivedSpan } from '../../support/otlp-receiver.ts';
import { distribution, rounded, table } from './stats.ts';

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

/** The router's span of a whole run: it ends after the run's last frame and its archive. */
export function isRunSpan(span: ReceivedSpan): boolean {
  return span.serviceName === 'router' && span.name === 'router run';
}

/** The writer's span of a model call (`chat <model>`): it ends when the model's stream is read. */
function isChat(span: ReceivedSpan): boolean {
  return span.serviceName === 'writer' && /^chat /.test(span.name);
}

/** The newest model call: the previous run's last spans may still arrive after clear(). */
function newestModelCall(spans: ReceivedSpan[]): ReceivedSpan | undefined {
  return spans.filter(isModelCall).sort((a, b) => b.startMs - a.startMs)[0];
}

/** Each span's offset from the gateway's request span, up to the model call. */
export function layout(spans: ReceivedSpan[]): Map<string, SpanRow> {
  const model = newestModelCall(spans);
  const root = spans.find((span) => isRequest(span) && span.traceId === model?.traceId);
  if (!root || !model) return new Map();
  return rowsFrom(spans, root.traceId, root.startMs, (span) => span.startMs <= model.startMs);
}

/**
 * The end of the run: each span that starts after the model call's stream was read, with its
 * offset from then, up to the router's last (the terminal frame, the settlement, the run's rows,
 * `done` and the archive).
 */
export function endLayout(spans: ReceivedSpan[]): Map<string, SpanRow> {
  const model = newestModelCall(spans);
  const chat = spans
    .filter((span) => isChat(span) && span.traceId === model?.traceId)
    .sort((a, b) => b.endMs - a.endMs)[0];
  if (!model || !chat) return new Map();
  return rowsFrom(spans, model.traceId, chat.endMs, (span) => span.startMs >= chat.endMs);
}

function rowsFrom(
  spans: ReceivedSpan[],
  traceId: string,
  fromMs: number,
  within: (span: ReceivedSpan) => boolean,
): Map<string, SpanRow> {
  const rows = new Map<string, SpanRow>();
  const seen = new Map<string, number>();
  for (const span of [...spans].sort((a, b) => a.startMs - b.startMs)) {
    if (span.traceId !== traceId || !within(span)) continue;
    const name = `${span.serviceName} ${span.name}`;
    const occurrence = (seen.get(name) ?? 0) + 1;
    seen.set(name, occurrence);
    rows.set(occurrence > 1 ? `${name} #${occurrence}` : name, {
      offset: span.startMs - fromMs,
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

export type LayoutSummary = ReturnType<typeof summarizeLayouts>;

/** A summary as the bench prints it: start and length of each span, by start. */
export function layoutTable(summary: LayoutSummary): string {
  return table([
    ['start ms', 'took ms', 'span'],
    ...summary.map((row) => [row.offset_p50.toFixed(1), row.duration_p50.toFixed(1), row.span]),
  ]);
}

/** The same rows for the JSON line, rounded. */
export function roundedLayout(summary: LayoutSummary) {
  return summary.map((row) => ({
    ...row,
    offset_p50: rounded(row.offset_p50),
    duration_p50: rounded(row.duration_p50),
  }));
}
