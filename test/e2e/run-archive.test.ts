import { type Bus, connectBus, readStored } from '@quill/bus';
import { EventEnvelope, StepRecordEnvelope } from '@quill/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, getJson } from '../support/api.ts';
import { readStream, startRun } from '../support/sse-client.ts';
import { type Stack, startStack } from '../support/stack.ts';
import { testUrls } from '../support/urls.ts';

// The run archive (docs/architecture.md "Run archive"): EVENTS keeps a run for a short while
// here (EVENTS_MAX_AGE_S), the run's frames expire from the stream, and the run still replays
// exactly, through GET /agent/runs/:runId/events and the SSE resume, from the router's archive.
let stack: Stack;
let bus: Bus;

beforeAll(async () => {
  stack = await startStack({
    env: {
      // Long enough for one run to finish and be archived before anything of it expires, even
      // on a loaded machine (20 s was not, twice), short for the test.
      EVENTS_MAX_AGE_S: '40',
      ROUTER_RECONCILE_INTERVAL_S: '1',
    },
  });
  bus = await connectBus({ url: testUrls.nats, namespace: stack.namespace, name: 'archive-test' });
});

afterAll(async () => {
  await bus?.close();
  await stack?.stop();
});

const storedCount = async (subject: string) =>
  (await readStored(bus, { stream: bus.names.streams.events, subject, schema: EventEnvelope })).length;

describe('run archive', () => {
  it('replays a run whose stream expired, frame for frame with the same ids', async () => {
    const gateway = stack.gateways[0]!;
    const live = await readStream(
      await startRun(gateway, stack.apiKey, { project_id: stack.projectId, message: '写一段雨夜的开头' }),
    );
    expect(live.frames.at(-1)?.frame.type).toBe('done');
    const runId = live.frames[0]!.frame.run_id;
    const expected = live.frames.map((received) => ({ id: Number(received.id), frame: received.frame }));

    // The router archives right after `done`; then the stream forgets the run.
    await eventually(async () => {
      const { rows } = await stack.pool.query('SELECT archived_at FROM runs WHERE run_id = $1', [runId]);
      return rows[0]?.archived_at ? true : undefined;
    }).catch((error: unknown) => {
      throw new Error('the run was not archived', { cause: error });
    });
    await eventually(
      async () => ((await storedCount(bus.names.events(runId))) === 0 ? true : undefined),
      120_000,
    );
    expect(
      await readStored(bus, {
        stream: bus.names.streams.events,
        subject: bus.names.steps(runId),
        schema: StepRecordEnvelope,
      }),
    ).toEqual([]);

    const events = await getJson(gateway, `/agent/runs/${runId}/events`, stack.apiKey);
    expect(events.status).toBe(200);
    expect(events.body).toEqual({ run_id: runId, source: 'archive', events: expected });
    const after = expected[2]!.id;
    const tail = await getJson(gateway, `/agent/runs/${runId}/events?after=${after}`, stack.apiKey);
    expect((tail.body as { events: unknown[] }).events).toEqual(expected.slice(3));

    // The SSE resume from an id in the middle gives the rest, with the same ids, through done.
    const resumed = await readStream(
      await fetch(`${gateway}/api/v1/agent/runs/${runId}/stream`, {
        headers: { authorization: `Bearer ${stack.apiKey}`, 'last-event-id': String(after) },
      }),
    );
    expect(resumed.status).toBe(200);
    expect(resumed.frames.map((received) => ({ id: Number(received.id), frame: received.frame }))).toEqual(
      expected.slice(3),
    );
    // At done, the resume answers 204 as it does for a live stream.
    const atDone = await fetch(`${gateway}/api/v1/agent/runs/${runId}/stream`, {
      headers: { authorization: `Bearer ${stack.apiKey}`, 'last-event-id': String(expected.at(-1)!.id) },
    });
    expect(atDone.status).toBe(204);

    // The step records are archived with the frames (the router's `dispatched`, the worker's `result`).
    const { rows } = await stack.pool.query<{ steps: Array<{ record: { kind: string } }> }>(
      'SELECT steps FROM run_archives WHERE run_id = $1',
      [runId],
    );
    expect(rows[0]!.steps.map((item) => item.record.kind)).toEqual(
      expect.arrayContaining(['dispatched', 'result']),
    );
    // Waiting for the stream to expire takes about EVENTS_MAX_AGE_S on top of the run.
  }, 300_000);
});
