import { lastStored } from '@quill/bus';
import { BlankFilesTask, type StepResult } from '@quill/contracts';
import { getRun } from '@quill/db';
import { appendMessage } from '@quill/db/router';
import { acquireSemaphore, acquireSessionLock, countSemaphore, getSessionLockHolder } from '@quill/redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPhaseWriter } from '../src/phases/phase-writer.ts';
import { finishRunWith } from '../src/run-finisher.ts';
import { emptyRunState } from '../src/run-state.ts';
import { finisherDependencies, framesOf, openRunRig, type RunRig, settled, takenRun } from './run-rig.ts';

let rig: RunRig;
/** What billing answers next (the test sets it per case). */
let nextSettle = settled('charge');

beforeAll(async () => {
  rig = await openRunRig('run-finisher', () => nextSettle);
});
afterAll(() => rig.close());

const dependencies = () => finisherDependencies(rig);

describe('run finisher', () => {
  it('a complete run: terminal frame, settlement, the run row done, session idle, lock and slot free, done last', async () => {
    nextSettle = settled('charge');
    const start = await takenRun(rig);
    const lockKey = rig.keys.sessionLock(start.session_id);
    await acquireSessionLock(rig.redis, lockKey, start.run_id, 60_000);
    await acquireSemaphore(rig.redis, rig.keys.userSemaphore(start.user_id), start.run_id, 3, 60_000);

    await finishRunWith(dependencies(), start, emptyRunState, { terminal: 'complete' }, rig.logger, {
      reply: '写好了。',
    });

    expect((await framesOf(rig, start.run_id)).map((frame) => frame.type)).toEqual([
      'workflow_complete',
      'done',
    ]);
    // The launch time goes with it: billing reads the run's record from there.
    expect(rig.settles.at(-1)).toMatchObject({
      run_id: start.run_id,
      outcome: { terminal: 'complete' },
      launched_at: start.created_at,
    });
    expect(await getRun(rig.database.pool, start.run_id)).toMatchObject({
      phase: 'done',
      stopReason: 'completed',
      billingDecision: 'charge',
    });
    expect(await getSessionLockHolder(rig.redis, lockKey)).toBeNull();
    expect(await countSemaphore(rig.redis, rig.keys.userSemaphore(start.user_id))).toBe(0);
  });

  it("the settle request names where the run's record begins: its run_started's sequence, and the launch time", async () => {
    nextSettle = settled('charge');
    const start = await takenRun(rig);
    await finishRunWith(dependencies(), start, emptyRunState, { terminal: 'complete' }, rig.logger, {
      startedSeq: 4242,
    });
    expect(rig.settles.at(-1)).toMatchObject({
      run_id: start.run_id,
      started_seq: 4242,
      launched_at: start.created_at,
    });
  });

  it('the routing outcome and the reply are written with the run’s end; an end that failed leaves the run running for a takeover, lock held, no done', async () => {
    nextSettle = settled('charge');
    const start = await takenRun(rig);
    const { pool } = rig.database;
    await appendMessage(pool, {
      id: start.message_id,
      sessionId: start.session_id,
      runId: start.run_id,
      role: 'user',
      content: start.message,
    });
    const lockKey = rig.keys.sessionLock(start.session_id);
    await acquireSessionLock(rig.redis, lockKey, start.run_id, 60_000);
    const extras = {
      reply: '写好了。',
      routingOutcome: { messageId: start.message_id, patch: { outcome: { reason: 'completed' } } },
    };
    // The end's statement fails (a dropped connection): nothing of it is written.
    const phases = createPhaseWriter(pool, rig.logger);
    const failing = {
      ...phases,
      endRun: () => Promise.reject(new Error('connection terminated')),
    };
    await expect(
      finishRunWith(
        { ...dependencies(), phases: failing },
        start,
        emptyRunState,
        { terminal: 'complete' },
        rig.logger,
        extras,
      ),
    ).rejects.toThrow('connection terminated');
    // The terminal frame and the settlement went out before it; nothing after it did.
    expect((await framesOf(rig, start.run_id)).map((frame) => frame.type)).toEqual(['workflow_complete']);
    expect(rig.settles.at(-1)).toMatchObject({ run_id: start.run_id });
    expect(await getRun(pool, start.run_id)).toMatchObject({ phase: 'running' });
    expect(await getSessionLockHolder(rig.redis, lockKey)).toBe(start.run_id);

    // The router that takes the run over finishes it again: the same terminal frame is stored
    // once, and the outcome and the reply land with the run's end.
    await finishRunWith(dependencies(), start, emptyRunState, { terminal: 'complete' }, rig.logger, extras);
    expect((await framesOf(rig, start.run_id)).map((frame) => frame.type)).toEqual([
      'workflow_complete',
      'done',
    ]);
    expect(await getRun(pool, start.run_id)).toMatchObject({ phase: 'done' });
    expect(await getSessionLockHolder(rig.redis, lockKey)).toBeNull();
    const messages = async () =>
      (
        await pool.query<{ role: string; content: string; routing: unknown }>(
          'SELECT role, content, routing FROM messages WHERE session_id = $1 ORDER BY created_at, seq',
          [start.session_id],
        )
      ).rows;
    const expected = [
      { role: 'user', content: start.message, routing: { outcome: { reason: 'completed' } } },
      { role: 'assistant', content: '写好了。', routing: null },
    ];
    expect(await messages()).toEqual(expected);
    // A router finishing it once more (its ack lost) adds no second reply.
    await finishRunWith(dependencies(), start, emptyRunState, { terminal: 'complete' }, rig.logger, extras);
    expect(await messages()).toEqual(expected);
  });

  it('a refunded stop says how many credits came back, between the terminal frame and done', async () => {
    nextSettle = settled('refund', 3);
    const start = await takenRun(rig);
    await finishRunWith(
      dependencies(),
      start,
      emptyRunState,
      { terminal: 'stopped', reason: 'user_stopped' },
      rig.logger,
    );
    const frames = await framesOf(rig, start.run_id);
    expect(frames.map((frame) => frame.type)).toEqual(['workflow_stopped', 'quota_refunded', 'done']);
    expect(frames[1]).toMatchObject({ credits: 3 });
    expect(await getRun(rig.database.pool, start.run_id)).toMatchObject({
      phase: 'done',
      stopReason: 'user_stopped',
      billingDecision: 'refund',
    });
  });

  it('a refunded stop hands the files its round created to the writer queue, with no worker holding the run', async () => {
    nextSettle = settled('refund', 1);
    const start = await takenRun(rig);
    const created = [crypto.randomUUID(), crypto.randomUUID()];
    const result: StepResult = {
      step: 0,
      role: 'writer',
      worker_instance: 'gone',
      outcome: 'stopped',
      stop_reason: 'user_stopped',
      final_text: '',
      files_written: [],
      file_operations: created.map((file_id) => ({ op: 'created', file_id, title: '空白' })),
      model_calls: 1,
      tool_calls: 1,
    };
    const state = { ...emptyRunState, results: new Map([[0, result]]) };
    const outcome = { terminal: 'stopped' as const, reason: 'user_stopped' as const };
    await finishRunWith(dependencies(), start, state, outcome, rig.logger);
    // A takeover finishing again publishes nothing new (the msg id).
    await finishRunWith(dependencies(), start, state, outcome, rig.logger);
    const subject = rig.bus.names.blankFiles(start.run_id);
    const stored = await lastStored(rig.bus, { stream: rig.bus.names.streams.tasks, subject });
    expect(BlankFilesTask.parse(JSON.parse(new TextDecoder().decode(stored!.data)))).toEqual({
      v: 1,
      kind: 'blank_files',
      run_id: start.run_id,
      project_id: start.project_id,
      file_ids: created,
      reason: 'refunded_round',
    });
    const info = await rig.bus.jsm.streams.info(rig.bus.names.streams.tasks, { subjects_filter: subject });
    expect(info.state.subjects).toEqual({ [subject]: 1 });
  });

  it('a charged stop leaves its files to the author: nothing is handed over', async () => {
    nextSettle = settled('charge');
    const start = await takenRun(rig);
    const result: StepResult = {
      step: 0,
      role: 'writer',
      worker_instance: 'w',
      outcome: 'stopped',
      stop_reason: 'user_stopped',
      final_text: '写了一半',
      files_written: [],
      file_operations: [{ op: 'created', file_id: crypto.randomUUID(), title: '空白' }],
      model_calls: 1,
      tool_calls: 1,
    };
    const state = { ...emptyRunState, results: new Map([[0, result]]) };
    await finishRunWith(
      dependencies(),
      start,
      state,
      { terminal: 'stopped', reason: 'user_stopped' },
      rig.logger,
    );
    const subject = rig.bus.names.blankFiles(start.run_id);
    expect(
      await lastStored(rig.bus, { stream: rig.bus.names.streams.tasks, subject }).catch(() => undefined),
    ).toBe(undefined);
  });

  it('finishing twice (a takeover redoing it) stores each frame once and settles idempotently', async () => {
    nextSettle = settled('charge');
    const start = await takenRun(rig);
    const outcome = { terminal: 'error' as const, code: 'model_unavailable' as const };
    await finishRunWith(dependencies(), start, emptyRunState, outcome, rig.logger);
    await finishRunWith(dependencies(), start, emptyRunState, outcome, rig.logger);
    expect((await framesOf(rig, start.run_id)).map((frame) => frame.type)).toEqual(['error', 'done']);
    expect(await getRun(rig.database.pool, start.run_id)).toMatchObject({
      phase: 'error',
      errorCode: 'model_unavailable',
    });
  });

  it('a billing refusal still ends the run with its terminal frame and done, decision left open', async () => {
    nextSettle = { v: 1, ok: false, code: 'internal_error' };
    const start = await takenRun(rig);
    await finishRunWith(dependencies(), start, emptyRunState, { terminal: 'complete' }, rig.logger);
    expect((await framesOf(rig, start.run_id)).map((frame) => frame.type)).toEqual([
      'workflow_complete',
      'done',
    ]);
    expect(await getRun(rig.database.pool, start.run_id)).toMatchObject({
      phase: 'done',
      billingDecision: null,
    });
  });
});
