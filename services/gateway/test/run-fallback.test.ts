import { randomUUID } from 'node:crypto';
import { type Bus, publishFrame, readStored } from '@quill/bus';
import { EventEnvelope, frame, isTerminalFrame } from '@quill/contracts';
import { getRun } from '@quill/db';
import { seedDemo } from '@quill/db/seed';
import { createTestDatabase, type TestDatabase } from '@quill/db/testing';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestRun } from '../../../test/support/run-rows.ts';
import { closeTestBus, openTestBus, recordStoredReads } from '../../../test/support/test-bus.ts';
import { endRunIfUnfinished } from '../src/run-fallback.ts';

let bus: Bus;
let database: TestDatabase;
const logger = pino({ level: 'silent' });
// No router answers in this test: one short attempt, then the row is left to the router's sweep.
const REQUEST = { timeoutMs: 200, deadlineMs: 200 };

beforeAll(async () => {
  bus = await openTestBus('fb', 'fallback-test', { runMaxDeliver: 3 });
  database = await createTestDatabase();
});

afterAll(async () => {
  await closeTestBus(bus);
  await database?.drop();
});

const framesOf = async (runId: string) =>
  (
    await readStored(bus, {
      stream: bus.names.streams.events,
      subject: bus.names.events(runId),
      schema: EventEnvelope,
    })
  ).map((item) => item.envelope!.frame);

describe('gateway fallback terminal', () => {
  it('ends a run nobody finished with one worker_lost error and done, once however often it runs', async () => {
    const runId = randomUUID();
    await publishFrame(bus, frame('text', runId, { agent: 'writer', content: '半句' }));
    await endRunIfUnfinished(bus, runId, logger, REQUEST);
    await endRunIfUnfinished(bus, runId, logger, REQUEST);
    const frames = await framesOf(runId);
    expect(frames.map((value) => value.type)).toEqual(['text', 'error', 'done']);
    expect(frames[1]).toMatchObject({ code: 'worker_lost', retryable: true });
  });

  it('adds only done when the run already has its terminal frame, and nothing when it has done', async () => {
    const runId = randomUUID();
    await publishFrame(bus, frame('workflow_complete', runId, {}));
    await endRunIfUnfinished(bus, runId, logger, REQUEST);
    expect((await framesOf(runId)).map((value) => value.type)).toEqual(['workflow_complete', 'done']);
    await endRunIfUnfinished(bus, runId, logger, REQUEST);
    const frames = await framesOf(runId);
    expect(frames.filter(isTerminalFrame)).toHaveLength(1);
    expect(frames).toHaveLength(2);
  });

  it('reads the run from its launch time, and a launch time later than the run still sees its terminal', async () => {
    for (const late of [false, true]) {
      const runId = randomUUID();
      const started = frame('run_started', runId, {
        session_id: randomUUID(),
        project_id: randomUUID(),
        generation_mode: 'fast',
      });
      await publishFrame(bus, started);
      await publishFrame(bus, frame('workflow_complete', runId, {}));
      // A clock ten minutes ahead stamped the launch: the read from that time finds nothing.
      const launchedAt = late ? new Date(Date.now() + 600_000).toISOString() : started.ts;
      const recorded = recordStoredReads(bus);
      try {
        await endRunIfUnfinished(bus, runId, logger, REQUEST, { launchedAt });
      } finally {
        recorded.restore();
      }
      const reads = recorded.consumers.filter((config) => config.filter_subject === bus.names.events(runId));
      const frames = await framesOf(runId);
      expect(frames.map((value) => value.type)).toEqual(['run_started', 'workflow_complete', 'done']);
      expect(reads[0]?.deliver_policy).toBe('by_start_time');
      // Read again from the stream's start only when the timed read missed the run's start.
      expect(reads).toHaveLength(late ? 2 : 1);
    }
  });

  it("reads the run from its run_started's sequence when the launch named it", async () => {
    const runId = randomUUID();
    const started = await publishFrame(
      bus,
      frame('run_started', runId, {
        session_id: randomUUID(),
        project_id: randomUUID(),
        generation_mode: 'fast',
      }),
    );
    await publishFrame(bus, frame('workflow_complete', runId, {}));
    const reads = recordStoredReads(bus);
    try {
      await endRunIfUnfinished(bus, runId, logger, REQUEST, {
        startedSeq: started.seq,
        launchedAt: new Date().toISOString(),
      });
    } finally {
      reads.restore();
    }
    expect((await framesOf(runId)).map((value) => value.type)).toEqual([
      'run_started',
      'workflow_complete',
      'done',
    ]);
    const eventReads = reads.consumers.filter((config) => config.filter_subject === bus.names.events(runId));
    expect(eventReads.map((config) => [config.deliver_policy, config.opt_start_seq])).toEqual([
      ['by_start_sequence', started.seq],
    ]);
  });

  it('leaves the row to the router: it writes no table itself', async () => {
    const demo = await seedDemo(database.pool, { apiKey: `qk_test_${randomUUID()}` });
    const { runId } = await createTestRun(database.pool, { projectId: demo.projectId, userId: demo.userId });
    await publishFrame(bus, frame('text', runId, { agent: 'writer', content: '半句' }));
    await endRunIfUnfinished(bus, runId, logger, REQUEST);
    expect((await framesOf(runId)).map((value) => value.type)).toEqual(['text', 'error', 'done']);
    // Nobody served router.runs.end here: the row stays for the router's sweep to finish.
    expect(await getRun(database.pool, runId)).toMatchObject({ phase: 'running' });
  });
});
