import { describe, expect, it } from 'vitest';
import type { ReceivedSpan } from '../../support/otlp-receiver.ts';
import { endLayout, layout, summarizeLayouts } from './launch-layout.ts';

const span = (
  traceId: string,
  serviceName: string,
  name: string,
  kind: ReceivedSpan['kind'],
  startMs: number,
  endMs: number,
): ReceivedSpan => ({
  traceId,
  spanId: `${serviceName}-${name}-${startMs}`,
  parentSpanId: '',
  name,
  kind,
  serviceName,
  scope: 'test',
  attributes: {},
  resource: {},
  status: { code: 'unset', message: '' },
  links: [],
  startMs,
  endMs,
});

// One launch (trace t2) from the POST at 1,000 ms to the writer's model request at 1,030 and its
// stream read at 1,180, then the run's end; a previous run's late spans (trace t1) arrive too.
const spans: ReceivedSpan[] = [
  span('t1', 'writer', 'POST', 'client', 500, 600),
  span('t1', 'router', 'publish run.*.events', 'producer', 990, 991),
  span('t2', 'gateway', 'POST /api/v1/agent/stream', 'server', 1_000, 1_200),
  span('t2', 'router', 'publish run.*.events', 'producer', 1_020, 1_021),
  span('t2', 'writer', 'chat quill-fake-1', 'client', 1_029, 1_180),
  span('t2', 'writer', 'POST', 'client', 1_030, 1_178),
  span('t2', 'router', 'publish run.*.events', 'producer', 1_192, 1_193),
  span('t2', 'router', 'request billing.settle', 'client', 1_193, 1_201),
  span('t2', 'router', 'publish run.*.events', 'producer', 1_205, 1_206),
  span('t2', 'router', 'router run', 'consumer', 1_016, 1_215),
];

describe('launch layout', () => {
  it('lays the launch out from the POST up to the newest model request, in its own trace only', () => {
    const rows = layout(spans);
    expect([...rows.keys()]).toEqual([
      'gateway POST /api/v1/agent/stream',
      'router router run',
      'router publish run.*.events',
      'writer chat quill-fake-1',
      'writer POST',
    ]);
    expect(rows.get('router publish run.*.events')).toEqual({ offset: 20, duration: 1 });
  });

  it('lays the end out from the end of the model stream read, numbering repeated spans', () => {
    const rows = endLayout(spans);
    expect([...rows.entries()]).toEqual([
      ['router publish run.*.events', { offset: 12, duration: 1 }],
      ['router request billing.settle', { offset: 13, duration: 8 }],
      ['router publish run.*.events #2', { offset: 25, duration: 1 }],
    ]);
  });

  it('summarizes by median offset, leaving out spans found in under half of the runs', () => {
    const shifted = spans.map((value) => ({ ...value, startMs: value.startMs + 4, endMs: value.endMs + 4 }));
    const once = [...spans, span('t2', 'router', 'stray', 'internal', 1_195, 1_196)];
    const summary = summarizeLayouts([endLayout(once), endLayout(shifted), endLayout(spans)]);
    expect(summary.map((row) => [row.span, row.in_runs, row.offset_p50])).toEqual([
      ['router publish run.*.events', 3, 12],
      ['router request billing.settle', 3, 13],
      ['router publish run.*.events #2', 3, 25],
    ]);
  });
});
