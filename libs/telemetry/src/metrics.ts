import {
  type Attributes,
  type Counter,
  type Histogram,
  metrics,
  type UpDownCounter,
} from '@opentelemetry/api';

/**
 * Every Quill metric, one place (docs/operations.md "Metrics" lists them with their Prometheus
 * names: dots become underscores and counters get `_total`; the exporter adds no unit suffix, so
 * histograms in seconds carry `_seconds` in their own name, as Prometheus names them).
 * Instruments are made on first use, from the global meter provider `register.ts` installs: a
 * process started without it (in-process tests) gets no-op instruments.
 */
export interface QuillMetrics {
  /** Runs accepted by a gateway and published to `runs.start`. */
  runsStarted: Counter;
  /** Runs a router is orchestrating now. */
  runsActive: UpDownCounter;
  /** Runs ended, by `terminal` (complete | stopped | error) and `reason` (stop reason or error code). */
  runsFinished: Counter;
  /** Time from a model call's start to its first token, by provider, model and role. */
  modelTimeToFirstToken: Histogram;
  /** From a frame's producer timestamp to its write on an SSE response. */
  frameDelay: Histogram;
  sseStreamsOpen: UpDownCounter;
  /** Provider attempts, by provider, model and outcome (ok | failed) and error kind. */
  modelCalls: Counter;
  /** Tokens, by provider, model and `gen_ai.token.type` (input | output). */
  modelTokens: Counter;
  /** Provider switches within one call, by from/to provider and reason. */
  modelFailovers: Counter;
  /** Settlements made, by decision (charge | refund) and billing reason. */
  billingSettlements: Counter;
  billingCreditsRefunded: Counter;
  /** A router's `billing.settle` that failed or was refused (left to reconciliation). */
  billingSettlementFailures: Counter;
  /** Settlements whose read from the run's launch time missed its start and read it again. */
  runRecordRereads: Counter;
  /** A router's reads of a run's stored step log by sequence, by `trigger` (interval | reconnect). */
  stepLogCatchUps: Counter;
  /** Tool calls that came back as errors to the model, by tool and error type. */
  toolErrors: Counter;
  /** Stop requests, by reason (user_stopped, client_disconnected, wall_clock_timeout…). */
  stopRequests: Counter;
  /** Steering messages queued (accepted) and delivered to a model call. */
  steeringMessages: Counter;
  /** Pauses of the memory-reducing collections a quiet process ran (the count is how many). */
  memoryIdleReductionPause: Histogram;
}

const METER_NAME = '@quill/telemetry';
// Seconds buckets for model latency: a first token takes 0.2 s to tens of seconds.
const TTFT_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60];
// Frame delay is milliseconds when healthy; seconds means a backlog in the relay.
const FRAME_DELAY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
// A quiet process's memory-reducing collection: tens of milliseconds, more on a loaded machine.
const REDUCTION_PAUSE_BUCKETS = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];

let cached: QuillMetrics | undefined;

export function quillMetrics(): QuillMetrics {
  if (cached) return cached;
  const meter = metrics.getMeter(METER_NAME);
  const counter = (name: string, description: string) => meter.createCounter(name, { description });
  cached = {
    runsStarted: counter('quill.runs.started', 'runs accepted and published to runs.start'),
    runsActive: meter.createUpDownCounter('quill.runs.active', {
      description: 'runs a router orchestrates now',
    }),
    runsFinished: counter('quill.runs.finished', 'runs ended, by terminal and reason'),
    modelTimeToFirstToken: meter.createHistogram('quill.model.time_to_first_token_seconds', {
      description: 'model call start to first token',
      unit: 's',
      advice: { explicitBucketBoundaries: TTFT_BUCKETS },
    }),
    frameDelay: meter.createHistogram('quill.sse.frame_delay_seconds', {
      description: 'frame timestamp to its write on an SSE stream',
      unit: 's',
      advice: { explicitBucketBoundaries: FRAME_DELAY_BUCKETS },
    }),
    sseStreamsOpen: meter.createUpDownCounter('quill.sse.streams_open', {
      description: 'SSE run streams open on this gateway',
    }),
    modelCalls: counter('quill.model.calls', 'model provider attempts, by outcome'),
    modelTokens: counter('quill.model.tokens', 'model tokens by provider, model and token type'),
    modelFailovers: counter('quill.model.failovers', 'provider switches within a model call'),
    billingSettlements: counter('quill.billing.settlements', 'settlements by decision and reason'),
    billingCreditsRefunded: counter('quill.billing.credits_refunded', 'credits given back'),
    billingSettlementFailures: counter(
      'quill.billing.settlement_failures',
      'settle requests that failed or were refused; reconciliation settles these runs',
    ),
    runRecordRereads: counter(
      'quill.billing.run_record_rereads',
      "settlements that read their run again from the stream's start: clocks apart more than a minute",
    ),
    stepLogCatchUps: counter(
      'quill.router.step_log_catch_ups',
      'reads of a run step log by sequence, for records core delivery lost, by trigger',
    ),
    toolErrors: counter('quill.tool.errors', 'tool calls answered with an error'),
    stopRequests: counter('quill.run.stop_requests', 'stop requests by reason'),
    steeringMessages: counter('quill.run.steering_messages', 'steering messages by stage'),
    memoryIdleReductionPause: meter.createHistogram('quill.memory.idle_reduction_pause_seconds', {
      description: 'pause of the memory-reducing collection a quiet process ran',
      unit: 's',
      advice: { explicitBucketBoundaries: REDUCTION_PAUSE_BUCKETS },
    }),
  };
  return cached;
}

/** A last-seen value per attribute set, for state that lives elsewhere (Redis breakers). */
export function observedGauge(
  name: string,
  description: string,
): (value: number, attributes: Attributes) => void {
  const gauge = metrics.getMeter(METER_NAME).createGauge(name, { description });
  return (value, attributes) => gauge.record(value, attributes);
}

/**
 * Observable gauges filled by one async fetch per scrape (a JetStream consumer info round trip);
 * a failed fetch reports nothing for that scrape rather than failing it.
 */
export function asyncGauges(
  names: Record<string, string>,
  fetch: () => Promise<Array<{ values: Record<string, number>; attributes: Attributes }>>,
): void {
  const meter = metrics.getMeter(METER_NAME);
  const gauges = Object.entries(names).map(([key, name]) => ({
    key,
    gauge: meter.createObservableGauge(name, { description: `${name}, per consumer` }),
  }));
  meter.addBatchObservableCallback(
    async (result) => {
      const rows = await fetch().catch(() => []);
      for (const row of rows)
        for (const { key, gauge } of gauges) {
          const value = row.values[key];
          if (value !== undefined) result.observe(gauge, value, row.attributes);
        }
    },
    gauges.map(({ gauge }) => gauge),
  );
}

/**
 * Observable instruments over numbers a process keeps itself (a cache's size, its hits and
 * misses), read once per scrape: nothing is recorded on the path that moves them.
 */
export function observedStats<K extends string>(
  instruments: Record<K, { name: string; description: string; kind: 'gauge' | 'counter' }>,
  read: () => Record<K, number>,
): void {
  const meter = metrics.getMeter(METER_NAME);
  const observables = (Object.entries(instruments) as Array<[K, (typeof instruments)[K]]>).map(
    ([key, { name, description, kind }]) => ({
      key,
      observable:
        kind === 'gauge'
          ? meter.createObservableGauge(name, { description })
          : meter.createObservableCounter(name, { description }),
    }),
  );
  meter.addBatchObservableCallback(
    (result) => {
      const values = read();
      for (const { key, observable } of observables) result.observe(observable, values[key]);
    },
    observables.map(({ observable }) => observable),
  );
}
