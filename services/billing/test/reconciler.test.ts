import { randomUUID } from 'node:crypto';
import { type Bus, publishFrame } from '@quill/bus';
import { BillingSettleRequest, errorFrame, frame, type SseFrame } from '@quill/contracts';
import { getCredits, getRun } from '@quill/db';
import { finishRun, setSessionPhase } from '@quill/db/router';
import { seedDemo } from '@quill/db/seed';
import { createTestDatabase, type TestDatabase } from '@quill/db/testing';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestRun } from '../../../test/support/run-rows.ts';
import { closeTestBus, openTestBus } from '../../../test/support/test-bus.ts';
import { reserveCredit } from '../src/ledger.ts';
import { createReconciler, type ReconcilerSettings } from '../src/reconciler.ts';
import { createSettleHandler } from '../src/settlement.ts';

const logger = pino({ level: 'silent' });
let bus: Bus;
let database: TestDatabase;
let demo: { userId: string; projectId: string };

beforeAll(async () => {
  database = await createTestDatabase();
  bus = await openTestBus('rc', 'billing-reconciler-test');
  demo = await seedDemo(database.pool, { apiKey: `qk_test_${randomUUID()}`, credits: 10 });
});

afterAll(async () => {
  await closeTestBus(bus);
  await database?.drop();
});

const SETTINGS: ReconcilerSettings = {
  intervalMs: 60_000,
  minAgeSeconds: 0,
  batch: 50,
};

function reconciler(settings: Partial<ReconcilerSettings> = {}) {
  const settle = createSettleHandler({ bus, pool: database.pool, logger });
  return createReconciler({ pool: database.pool, logger, settle }, { ...SETTINGS, ...settings });
}

/** A run as the gateway leaves it: row and session running, one credit reserved, run_started out. */
async function startedRun(): Promise<{ runId: string; sessionId: string }> {
  const { runId, sessionId } = await createTestRun(database.pool, {
    projectId: demo.projectId,
    userId: demo.userId,
  });
  await setSessionPhase(database.pool, sessionId, 'running');
  expect(
    await reserveCredit(database.pool, { runId, userId: demo.userId, defaultCredits: 10 }),
  ).toMatchObject({
    ok: true,
  });
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
  frame('text', runId, { agent: 'writer', content: '林晚推开门，风裹着雨点扑进来。'.repeat(20) }),
  frame('message_end', runId, { agent: 'writer', stop_reason: 'stop' }),
];

describe('settlement reconciliation against JetStream and Postgres', () => {
  it('settles, once, an ended run whose router could not reach billing (refunded: worker_lost)', async () => {
    const { runId } = await startedRun();
    const before = (await getCredits(database.pool, demo.userId))!;
    await publish([...wroteReply(runId), errorFrame(runId, 'worker_lost'), frame('done', runId, {})]);
    await finishRun(database.pool, runId, { phase: 'error', stopReason: 'error', errorCode: 'worker_lost' });

    const first = await reconciler().runOnce();
    expect(first).toMatchObject({ ran: true, settled: 1, failed: 0 });
    expect(await getCredits(database.pool, demo.userId)).toBe(before + 1);
    // The row is the router's: its sweep copies the decision (services/router/test/run-sweep.test.ts).
    expect((await getRun(database.pool, runId))?.billingDecision).toBeNull();
    const settlement = await database.pool.query(
      'SELECT decision, reason FROM settlements WHERE run_id = $1',
      [runId],
    );
    expect(settlement.rows).toEqual([{ decision: 'refund', reason: 'worker_lost:infrastructure' }]);

    // A second pass (or another replica's) finds nothing left to settle and moves no money.
    expect(await reconciler().runOnce()).toMatchObject({ ran: true, settled: 0 });
    expect(await getCredits(database.pool, demo.userId)).toBe(before + 1);
  });

  it('asks for the run’s record from its launch: the run row’s created_at', async () => {
    const { runId } = await startedRun();
    await publish([...wroteReply(runId), errorFrame(runId, 'worker_lost'), frame('done', runId, {})]);
    await finishRun(database.pool, runId, { phase: 'error', stopReason: 'error', errorCode: 'worker_lost' });
    const requests: BillingSettleRequest[] = [];
    const handler = createSettleHandler({ bus, pool: database.pool, logger });
    const pass = createReconciler(
      {
        pool: database.pool,
        logger,
        settle: (request) => {
          requests.push(request);
          return handler(request);
        },
      },
      SETTINGS,
    );
    expect(await pass.runOnce()).toMatchObject({ ran: true, settled: 1, failed: 0 });
    const created = (await getRun(database.pool, runId))!.createdAt;
    const mine = requests.find((request) => request.run_id === runId);
    // The request passes the contract the bus holds it to, and the read from that time settles it.
    expect(BillingSettleRequest.parse(mine).launched_at).toBe(created);
    const settlement = await database.pool.query('SELECT reason FROM settlements WHERE run_id = $1', [runId]);
    expect(settlement.rows).toEqual([{ reason: 'worker_lost:infrastructure' }]);
  });

  it('runs one pass at a time across replicas', async () => {
    const holder = await database.pool.connect();
    try {
      await holder.query("SELECT pg_advisory_lock(hashtext('quill.billing.reconcile'))");
      expect(await reconciler().runOnce()).toMatchObject({ ran: false });
    } finally {
      await holder.query("SELECT pg_advisory_unlock(hashtext('quill.billing.reconcile'))");
      holder.release();
    }
    expect(await reconciler().runOnce()).toMatchObject({ ran: true });
  });
});
