import { readFileSync } from 'node:fs';
import { metrics } from '@opentelemetry/api';
import { PrometheusExporter, PrometheusSerializer } from '@opentelemetry/exporter-prometheus';
import { RuntimeNodeInstrumentation } from '@opentelemetry/instrumentation-runtime-node';
import { MeterProvider } from '@opentelemetry/sdk-metrics';
import { asyncGauges, observedGauge, quillMetrics } from '@quill/telemetry';
import { beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { createTextCache, observeTextCache } from '../../services/context/src/text-cache.ts';
import { parsePrometheus } from '../support/prometheus.ts';

const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');
const runbook = read('docs/operations.md');

// The Prometheus names the services really export: every Quill instrument, recorded once through
// the same exporter the services use, and the runtime instrumentation they run, then serialized.
let exported: Set<string>;
beforeAll(async () => {
  const exporter = new PrometheusExporter({ preventServerStart: true });
  const provider = new MeterProvider({ readers: [exporter] });
  metrics.setGlobalMeterProvider(provider);
  const runtime = new RuntimeNodeInstrumentation({ monitoringPrecision: 10 });
  runtime.setMeterProvider(provider);
  const instruments = quillMetrics() as unknown as Record<
    string,
    { add?: (value: number) => void; record?: (value: number) => void }
  >;
  for (const instrument of Object.values(instruments))
    (instrument.add ?? instrument.record)!.call(instrument, 1);
  observedGauge('quill.model.breaker_state', 'test')(0, { provider: 'primary' });
  asyncGauges(
    {
      pending: 'quill.jetstream.consumer.pending',
      ackPending: 'quill.jetstream.consumer.ack_pending',
      redelivered: 'quill.jetstream.consumer.redelivered',
    },
    async () => [{ values: { pending: 1, ackPending: 1, redelivered: 1 }, attributes: { consumer: 'c' } }],
  );
  observeTextCache(createTextCache(1_000));
  // Allocating past the young generation makes a collection for the GC histogram; the loop's
  // delay is reported once it has a few samples (10 ms apart) since the previous collect.
  let kept: unknown[] = [];
  for (let index = 0; index < 200_000; index++) kept = [kept, { index }];
  exported = new Set();
  while (!exported.has('nodejs_eventloop_delay_p99') || !exported.has('v8js_gc_duration_count')) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    const { resourceMetrics } = await exporter.collect();
    for (const sample of parsePrometheus(new PrometheusSerializer().serialize(resourceMetrics)))
      exported.add(sample.name);
  }
  runtime.disable();
}, 30_000);

/** Every quill_*, nodejs_* and v8js_* series a PromQL text uses must be one the services export. */
function unknownMetrics(promql: string): string[] {
  return [...promql.matchAll(/\b(?:quill|nodejs|v8js)_[a-z0-9_]+/g)]
    .map((match) => match[0])
    .filter((name) => !exported.has(name));
}

describe('Prometheus alert rules (deploy/prometheus/alerts.yml)', () => {
  const rules = (
    parse(read('deploy/prometheus/alerts.yml')) as {
      groups: Array<{ rules: Array<{ alert: string; expr: string; annotations: Record<string, string> }> }>;
    }
  ).groups.flatMap((group) => group.rules);

  it('the metric list is the real one (the check below can fail)', () => {
    expect(exported.has('quill_runs_finished_total')).toBe(true);
    expect(exported.has('quill_sse_frame_delay_seconds_bucket')).toBe(true);
    expect(unknownMetrics('rate(quill_runs_finishd_total[5m])')).toEqual(['quill_runs_finishd_total']);
    expect(exported.has('nodejs_eventloop_utilization')).toBe(true);
    expect(unknownMetrics('nodejs_eventloop_delay_p98')).toEqual(['nodejs_eventloop_delay_p98']);
  });

  it('uses only metrics the services export', () => {
    expect(rules.length).toBeGreaterThanOrEqual(10);
    for (const rule of rules) expect(unknownMetrics(rule.expr), rule.alert).toEqual([]);
  });

  it('links every alert to its section of the runbook', () => {
    for (const rule of rules) {
      expect(rule.annotations.runbook, rule.alert).toBe(`docs/operations.md#${rule.alert.toLowerCase()}`);
      expect(runbook, rule.alert).toContain(`\n### ${rule.alert}\n`);
    }
  });
});

describe('Grafana dashboard (deploy/grafana)', () => {
  const dashboard = JSON.parse(read('deploy/grafana/dashboards/quill.json')) as {
    panels: Array<{ title: string; datasource: { uid: string }; targets: Array<{ expr: string }> }>;
  };
  const datasource = parse(read('deploy/grafana/provisioning/datasources/prometheus.yml')) as {
    datasources: Array<{ uid: string }>;
  };

  it('queries only exported metrics through the provisioned data source', () => {
    expect(dashboard.panels.length).toBeGreaterThanOrEqual(12);
    for (const panel of dashboard.panels) {
      expect(panel.datasource.uid, panel.title).toBe(datasource.datasources[0]!.uid);
      for (const target of panel.targets) expect(unknownMetrics(target.expr), panel.title).toEqual([]);
    }
  });

  it('shows every metric of the runbook’s metric table', () => {
    const queried = dashboard.panels
      .flatMap((panel) => panel.targets.map((target) => target.expr))
      .join('\n');
    const documented = [...runbook.matchAll(/\| `(quill_[a-z0-9_]+)`/g)].map((match) => match[1]!);
    expect(documented.length).toBeGreaterThanOrEqual(15);
    for (const name of documented) expect(queried, name).toContain(name);
  });
});
