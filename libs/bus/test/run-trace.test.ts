import { randomUUID } from 'node:crypto';
import { trace } from '@opentelemetry/api';
import { frame, StepRecordEnvelope } from '@quill/contracts';
import { withSpan } from '@quill/telemetry';
import { startTestTelemetry } from '@quill/telemetry/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  closeTestBus,
  openTestBus,
  recordStoredReads,
  type StoredGet,
} from '../../../test/support/test-bus.ts';
import { type Bus, publishEnvelope, publishFrame, runTraceContext } from '../src/index.ts';

// The run's trace a stop or steer links to, read from the newest records of the run, never by
// sequence from the stream's first message (docs/decisions/0076).
let bus: Bus;
let telemetry: Awaited<ReturnType<typeof startTestTelemetry>>;

beforeAll(async () => {
  telemetry = await startTestTelemetry('run-trace-test');
  bus = await openTestBus('rtrace', 'test');
});

afterAll(async () => {
  await closeTestBus(bus);
  await telemetry?.shutdown();
});

/** Publishes in a span of its own: returns that span's trace id. */
const inSpan = (publish: () => Promise<unknown>) =>
  withSpan('publish', {}, async () => {
    await publish();
    return trace.getActiveSpan()!.spanContext().traceId;
  });

const started = (runId: string) =>
  publishFrame(
    bus,
    frame('run_started', runId, {
      session_id: randomUUID(),
      project_id: randomUUID(),
      generation_mode: 'fast',
    }),
  );

const dispatched = (runId: string) =>
  publishEnvelope(bus, bus.names.steps(runId), StepRecordEnvelope, {
    v: 1,
    kind: 'dispatched',
    run_id: runId,
    step: 1,
    role: 'writer',
  });

/** The direct gets made on `bus` while `read` runs, with what it returned. */
async function queriesOf<T>(read: () => Promise<T>): Promise<{ value: T; queries: StoredGet[] }> {
  const reads = recordStoredReads(bus);
  try {
    return { value: await read(), queries: reads.gets };
  } finally {
    reads.restore();
  }
}

describe('a run’s trace, for the links of stops and steers', () => {
  it('is its newest step record’s, read from the stream’s end', async () => {
    const runId = randomUUID();
    await inSpan(() => started(runId));
    const stepTrace = await inSpan(() => dispatched(runId));
    // A streamed frame after it carries no trace.
    await publishFrame(bus, frame('text', runId, { agent: 'writer', content: '雨' }), {
      quiet: true,
      untraced: true,
    });
    const { value, queries } = await queriesOf(() => runTraceContext(bus, runId));
    expect(value?.traceId).toBe(stepTrace);
    expect(queries).toEqual([{ last_by_subj: bus.names.steps(runId) }]);
  });

  it('before the first dispatch, is the newest frame’s', async () => {
    const runId = randomUUID();
    const launchTrace = await inSpan(() => started(runId));
    const { value, queries } = await queriesOf(() => runTraceContext(bus, runId));
    expect(value?.traceId).toBe(launchTrace);
    expect(queries).toEqual([
      { last_by_subj: bus.names.steps(runId) },
      { last_by_subj: bus.names.events(runId) },
    ]);
  });

  it('is undefined for a run with nothing stored, or only untraced frames', async () => {
    expect(await runTraceContext(bus, randomUUID())).toBeUndefined();
    const runId = randomUUID();
    await publishFrame(bus, frame('text', runId, { agent: 'writer', content: '雨' }), {
      quiet: true,
      untraced: true,
    });
    expect(await runTraceContext(bus, runId)).toBeUndefined();
  });
});
