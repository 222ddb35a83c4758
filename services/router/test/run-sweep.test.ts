import { randomUUID } from 'node:crypto';
import { type Bus, publishEnvelope, publishFrame, readStored } from '@quill/bus';
import { EventEnvelope, errorFrame, frame, type SseFrame, StepRecordEnvelope } from '@quill/contracts';
import { getArchivedFrames, getRun, getSession } from '@quill/db';
import { setSessionPhase } from '@quill/db/router';
import { seedDemo } from '@quill/db/seed';
import { createTestDatabase, type TestDatabase } from '@quill/db/testing';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createTestRun } from '../../../test/support/run-rows.ts';
import { closeTestBus, countStoredGets, openTestBus } from '../../../test/support/test-bus.ts';
import { createPhaseWriter } from '../src/phases/phase-writer.ts';
import { createRunSweep, type SweepSettings } from '../src/phases/run-sweep.ts';

const logger = pino({ level: 'silent' });
let bus: Bus;
let database: TestDatabase;
let demo: { userId: string; projectId: string };

beforeAll(async () => {
  database = await createTestDatabase();
  bus = await openTestBus('sw', 'router-sweep-test');
  demo = await seedDemo(database.pool, { apiKey: `qk_test_${randomUUID()}`, credits: 10 });
});

afterAll(async () => {
  await closeTestBus(bus);
  await database?.drop();
});

const SETTINGS: SweepSettings = {
  intervalMs: 60_000,
  minAgeSeconds: 0,
  abandonedAfterSeconds: 3600,
  batch: 50,
};

function sweep(settings: Partial<SweepSettings> = {}) {
  const phases = createPhaseWriter(database.pool, logger);
  return createRunSweep({ bus, pool: database.pool, logger, phases }, { ...SETTINGS, ...settings });
}

/** A run a router took: row and session running, run_started out. */
async function takenRun(): Promise<{ runId: string; sessionId: string }> {
  const { runId, sessionId } = await createTestRun(database.pool, {
    projectId: demo.projectId,
    userId: demo.userId,
  });
  await setSessionPhase(database.pool, sessionId, 'running');
  await publishFrame(
    bus,
    frame('run_started', runId, {
      session_id: sessionId,
      project_id: demo.projectId,
      generation_mode: 'fast',
    }),
  );
  return { runId, sessionId };
}

async function publish(frames: SseFrame[]): Promise<void> {
  for (const value of frames) await publishFrame(bus, value);
}

const wroteReply = (runId: string): SseFrame[] => [
  frame('agent_start', runId, { agent: 'writer', step: 0 }),
  frame('text', runId, { agent: 'writer', content: '林晚推开门，风裹着雨点扑进来。' }),
  frame('message_end', runId, { agent: 'writer', stop_reason: 'stop' }),
];

describe('the router sweep of run rows', () => {
  it('brings a run whose stream ended but whose row stayed running to its terminal phase, and archives it', async () => {
    const { runId, sessionId } = await takenRun();
    await publishEnvelope(bus, bus.names.steps(runId), StepRecordEnvelope, {
      v: 1,
      kind: 'dispatched',
      run_id: runId,
      step: 0,
      role: 'writer',
    });
    await publish([...wroteReply(runId), frame('workflow_complete', runId, {}), frame('done', runId, {})]);

    const consumersMade = vi.spyOn(bus.jsm.consumers, 'add');
    try {
      expect(await sweep().runOnce()).toMatchObject({
        ran: true,
        finished: 1,
        ended: 0,
        archived: 1,
        failed: 0,
      });
      // Both reads of the run's frames (the pass's and the archive's) start from its launch time,
      // the row's created_at, not from the stream's first message (docs/decisions/0075).
      const reads = consumersMade.mock.calls
        .map(([, config]) => config)
        .filter((config) => config?.filter_subject === bus.names.events(runId));
      expect(reads).toHaveLength(2);
      for (const config of reads) expect(config?.deliver_policy).toBe('by_start_time');
    } finally {
      consumersMade.mockRestore();
    }
    expect(await getRun(database.pool, runId)).toMatchObject({ phase: 'done', stopReason: 'completed' });
    expect((await getSession(database.pool, sessionId))?.phase).toBe('done');
    const stored = await readStored(bus, {
      stream: bus.names.streams.events,
      subject: bus.names.events(runId),
      schema: EventEnvelope,
    });
    expect(await getArchivedFrames(database.pool, runId)).toEqual(
      stored.map((item) => ({ seq: item.seq, frame: item.envelope!.frame })),
    );
    // A second pass finds nothing left to do.
    expect(await sweep().runOnce()).toMatchObject({ finished: 0, archived: 0 });
  });

  it('leaves a running run whose stream has not ended to its router until it is abandoned', async () => {
    const { runId, sessionId } = await takenRun();
    await publish(wroteReply(runId));
    // A run in progress costs the pass one look at its newest frame, not a read of its stream.
    const consumersMade = vi.spyOn(bus.jsm.consumers, 'add');
    const gets = countStoredGets(bus);
    let consumers: number;
    try {
      expect(await sweep().runOnce()).toMatchObject({ finished: 0, ended: 0 });
    } finally {
      consumers = consumersMade.mock.calls.length;
      gets.restore();
      consumersMade.mockRestore();
    }
    expect(consumers).toBe(0);
    expect(gets.count).toBe(1);
    expect((await getRun(database.pool, runId))?.phase).toBe('running');

    // Past the deadline nobody ended it: the stream gets its terminal frame and done, once.
    expect(await sweep({ abandonedAfterSeconds: 0 }).runOnce()).toMatchObject({ ended: 1, finished: 1 });
    const frames = (
      await readStored(bus, {
        stream: bus.names.streams.events,
        subject: bus.names.events(runId),
        schema: EventEnvelope,
      })
    ).map((item) => item.envelope!.frame.type);
    expect(frames.slice(-2)).toEqual(['error', 'done']);
    expect(await getRun(database.pool, runId)).toMatchObject({ phase: 'error', errorCode: 'worker_lost' });
    expect((await getSession(database.pool, sessionId))?.phase).toBe('error');
  });

  it('copies the decision billing made by itself onto the run row', async () => {
    const { runId } = await takenRun();
    await publish([errorFrame(runId, 'worker_lost'), frame('done', runId, {})]);
    expect(await sweep().runOnce()).toMatchObject({ finished: 1 });
    // What billing's reconciler writes when it settles a run on its own.
    await database.pool.query(
      `INSERT INTO settlements (run_id, user_id, decision, reason) VALUES ($1, $2, 'refund', 'worker_lost:infrastructure')`,
      [runId, demo.userId],
    );
    expect(await sweep().runOnce()).toMatchObject({ decisions: 1 });
    expect((await getRun(database.pool, runId))?.billingDecision).toBe('refund');
  });

  it('runs one pass at a time across replicas', async () => {
    const holder = await database.pool.connect();
    try {
      await holder.query("SELECT pg_advisory_lock(hashtext('quill.router.sweep'))");
      expect(await sweep().runOnce()).toMatchObject({ ran: false });
    } finally {
      await holder.query("SELECT pg_advisory_unlock(hashtext('quill.router.sweep'))");
      holder.release();
    }
    expect(await sweep().runOnce()).toMatchObject({ ran: true });
  });
});
