import { randomUUID } from 'node:crypto';
import { type Bus, connectBus, ensureStreams, publishEnvelope, publishFrame } from '@quill/bus';
import { errorFrame, frame, type SseFrame, UsageEnvelope } from '@quill/contracts';
import { getCredits } from '@quill/db';
import { ensureQuotaAccount } from '@quill/db/billing';
import { createUser } from '@quill/db/gateway';
import { createTestDatabase, type TestDatabase } from '@quill/db/testing';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordStoredReads } from '../../../test/support/test-bus.ts';
import { testUrls, uniqueName } from '../../../test/support/urls.ts';
import { reserveCredit } from '../src/ledger.ts';
import { createSettleHandler } from '../src/settlement.ts';

const logger = pino({ level: 'silent' });
let bus: Bus;
let database: TestDatabase;
let settle: ReturnType<typeof createSettleHandler>;

beforeAll(async () => {
  database = await createTestDatabase();
  bus = await connectBus({ url: testUrls.nats, namespace: uniqueName('bs'), name: 'billing-settle-test' });
  await ensureStreams(bus, {
    eventsMaxAgeHours: 1,
    runAckWaitSeconds: 30,
    runMaxDeliver: 5,
    taskAckWaitSeconds: 30,
  });
  settle = createSettleHandler({ bus, pool: database.pool, logger });
});

afterAll(async () => {
  if (bus) {
    const { runs, tasks, events } = bus.names.streams;
    await Promise.allSettled([runs, tasks, events].map((name) => bus.jsm.streams.delete(name)));
    await bus.close();
  }
  await database?.drop();
});

async function newUser(credits: number): Promise<string> {
  const user = await createUser(database.pool, {
    email: `${randomUUID()}@test.quill`,
    displayName: 'Author',
  });
  await ensureQuotaAccount(database.pool, user.id, credits);
  return user.id;
}

async function publishRun(frames: SseFrame[]): Promise<void> {
  for (const value of frames) await publishFrame(bus, value);
}

/** One model call's usage report, 15 tokens, as a worker publishes it. */
function publishUsage(runId: string, userId: string, callIndex: number, provider: string) {
  return publishEnvelope(bus, bus.names.usage(runId), UsageEnvelope, {
    v: 1,
    run_id: runId,
    user_id: userId,
    call_index: callIndex,
    attempt: 1,
    role: 'writer',
    provider,
    model: 'm',
    usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15, usage_source: 'provider' },
  });
}

const failedBeforeOutput = (runId: string): SseFrame[] => [
  frame('run_started', runId, { session_id: 's', project_id: 'p', generation_mode: 'fast' }),
  frame('agent_start', runId, { agent: 'writer', step: 0 }),
  frame('message_end', runId, { agent: 'writer', stop_reason: 'error' }),
  errorFrame(runId, 'model_error'),
];

describe('billing.settle against JetStream and Postgres', () => {
  it('concurrent double settle: one settlement row, one refund, the same answer twice', async () => {
    const userId = await newUser(5);
    const runId = randomUUID();
    expect(await reserveCredit(database.pool, { runId, userId, defaultCredits: 100 })).toEqual({
      ok: true,
      creditsLeft: 4,
    });
    const published = failedBeforeOutput(runId);
    await publishRun(published);
    const request = {
      v: 1 as const,
      run_id: runId,
      user_id: userId,
      outcome: { terminal: 'error' as const, reason: 'model_error' },
    };
    const replies = await Promise.all([settle(request), settle(request), settle(request)]);
    const answers = replies.map((reply) => ({ ...reply, duplicate: undefined }));
    expect(new Set(answers.map((answer) => JSON.stringify(answer))).size).toBe(1);
    const { record, ...answer } = answers[0] as (typeof answers)[0] & { record?: unknown };
    expect(answer).toEqual({
      v: 1,
      ok: true,
      decision: 'refund',
      reason: 'model_error:no_output',
      credits_refunded: 1,
      duplicate: undefined,
    });
    // The run's record as the settlement read it, for the router's archive: every stored frame
    // with its stream sequence, in order.
    const carried = record as { frames: Array<{ seq: number; frame: SseFrame }>; steps: unknown[] };
    expect(carried.frames.map((item) => item.frame)).toEqual(published);
    const seqs = carried.frames.map((item) => item.seq);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    expect(carried.steps).toEqual([]);
    expect(replies.filter((reply) => reply.ok && !reply.duplicate)).toHaveLength(1);

    // A later retry (e.g. a takeover router) gets the same answer and moves nothing.
    const retried = await settle(request);
    expect(retried).toMatchObject({ decision: 'refund', credits_refunded: 1, duplicate: true });

    const settlements = await database.pool.query(
      'SELECT decision, produced_output FROM settlements WHERE run_id = $1',
      [runId],
    );
    expect(settlements.rows).toEqual([{ decision: 'refund', produced_output: false }]);
    const ledger = await database.pool.query(
      'SELECT kind, credits_delta FROM billing_ledger WHERE run_id = $1 ORDER BY kind',
      [runId],
    );
    expect(ledger.rows).toEqual([
      { kind: 'refund', credits_delta: 1 },
      { kind: 'reserve', credits_delta: -1 },
    ]);
    expect(await getCredits(database.pool, userId)).toBe(5);
  });

  it('charges a completed run and stores the run meter computed from its frames and usage', async () => {
    const userId = await newUser(3);
    const runId = randomUUID();
    await reserveCredit(database.pool, { runId, userId, defaultCredits: 100 });
    await publishRun([
      frame('run_started', runId, { session_id: 's', project_id: 'p', generation_mode: 'fast' }),
      frame('agent_start', runId, { agent: 'writer', step: 0 }),
      frame('tool_call', runId, {
        agent: 'writer',
        tool_call_id: 'c1',
        tool_name: 'create_file',
        arguments: {},
      }),
      frame('tool_result', runId, {
        agent: 'writer',
        tool_call_id: 'c1',
        tool_name: 'create_file',
        status: 'ok',
        summary: '',
      }),
      frame('file_start', runId, { agent: 'writer', file_id: 'f', title: '第一章', file_type: 'draft' }),
      frame('file_delta', runId, { file_id: 'f', content: '雨夜。' }),
      frame('file_saved', runId, { file_id: 'f', title: '第一章', version: 1, chars: 3 }),
      frame('message_end', runId, { agent: 'writer', stop_reason: 'stop' }),
      frame('workflow_complete', runId, {}),
    ]);
    for (const [callIndex, provider] of [
      [0, 'primary'],
      [1, 'backup'],
    ] as const) {
      await publishUsage(runId, userId, callIndex, provider);
    }
    const reply = await settle({
      v: 1,
      run_id: runId,
      user_id: userId,
      outcome: { terminal: 'complete', reason: 'completed' },
    });
    expect(reply).toMatchObject({
      decision: 'charge',
      reason: 'completed:completed',
      credits_refunded: 0,
      duplicate: false,
    });
    const { rows } = await database.pool.query(
      'SELECT produced_output, run_meter FROM settlements WHERE run_id = $1',
      [runId],
    );
    expect(rows[0].produced_output).toBe(true);
    expect(rows[0].run_meter).toMatchObject({
      run_model_calls: 2,
      run_tool_calls: 1,
      run_failovers: 1,
      run_files_saved: 1,
      run_total_tokens: 30,
      run_usage_source: 'provider',
    });
    expect(rows[0].run_meter.run_duration_ms).toBeGreaterThanOrEqual(0);
    expect(await getCredits(database.pool, userId)).toBe(2);
  });

  it("reads the run from its run_started's sequence when the request names it: no search by time", async () => {
    const userId = await newUser(3);
    const runId = randomUUID();
    await reserveCredit(database.pool, { runId, userId, defaultCredits: 100 });
    const started = await publishFrame(
      bus,
      frame('run_started', runId, { session_id: 's', project_id: 'p', generation_mode: 'fast' }),
    );
    await publishRun([
      frame('text', runId, { agent: 'writer', content: '写好了。' }),
      frame('message_end', runId, { agent: 'writer', stop_reason: 'stop' }),
      frame('workflow_complete', runId, {}),
    ]);
    await publishUsage(runId, userId, 0, 'primary');
    const reads = recordStoredReads(bus);
    let reply: Awaited<ReturnType<typeof settle>>;
    try {
      reply = await settle({
        v: 1,
        run_id: runId,
        user_id: userId,
        outcome: { terminal: 'complete', reason: 'completed' },
        launched_at: new Date().toISOString(),
        started_seq: started.seq,
      });
    } finally {
      reads.restore();
    }
    expect(reply).toMatchObject({ decision: 'charge', duplicate: false });
    expect(reads.consumers.map((config) => [config.deliver_policy, config.opt_start_seq])).toEqual([
      ['by_start_sequence', started.seq],
    ]);
    expect(reads.gets.every((get) => get.seq === undefined || get.seq >= started.seq)).toBe(true);
    const { rows } = await database.pool.query('SELECT run_meter FROM settlements WHERE run_id = $1', [
      runId,
    ]);
    expect(rows[0].run_meter).toMatchObject({ run_model_calls: 1, run_total_tokens: 15 });
  });

  it('refunds the reservation to the user who paid it, even when the caller names another', async () => {
    const payer = await newUser(2);
    const runId = randomUUID();
    await reserveCredit(database.pool, { runId, userId: payer, defaultCredits: 100 });
    const reply = await settle({
      v: 1,
      run_id: runId,
      user_id: randomUUID(),
      outcome: { terminal: 'error', reason: 'launch_failed' },
    });
    expect(reply).toMatchObject({ decision: 'refund', credits_refunded: 1 });
    expect(await getCredits(database.pool, payer)).toBe(2);
  });

  it('hands back the record it read only while it is small: a longer run’s is left for the archive to read', async () => {
    const userId = await newUser(3);
    const runId = randomUUID();
    await reserveCredit(database.pool, { runId, userId, defaultCredits: 100 });
    // ~3 KB a frame: past SETTLED_RECORD_MAX_BYTES in about 90 frames.
    const chapter = '雨'.repeat(1000);
    await publishRun([
      ...Array.from({ length: 100 }, () => frame('text', runId, { agent: 'writer', content: chapter })),
      frame('workflow_complete', runId, {}),
    ]);
    const reply = await settle({
      v: 1,
      run_id: runId,
      user_id: userId,
      outcome: { terminal: 'complete', reason: 'completed' },
    });
    expect(reply).toMatchObject({ ok: true, decision: 'charge' });
    expect(reply).not.toHaveProperty('record');
  });
});
