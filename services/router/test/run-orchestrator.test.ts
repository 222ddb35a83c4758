import {
  ack,
  type DeliveryContext,
  decodeEnvelope,
  publishEnvelope,
  publishFrame,
  type Responder,
  serveRequests,
} from '@quill/bus';
import {
  ContextCompileReply,
  ContextCompileRequest,
  frame,
  StepRecordEnvelope,
  TaskEnvelope,
} from '@quill/contracts';
import { getRun } from '@quill/db';
import { finishRun } from '@quill/db/router';
import { requestStop } from '@quill/run-control';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { recordStoredReads } from '../../../test/support/test-bus.ts';
import type { CatchUpPace } from '../src/catch-up-pace.ts';
import { createPhaseWriter } from '../src/phases/phase-writer.ts';
import { createRunKeepAlive, type RunKeepAlive } from '../src/run-keep-alive.ts';
import { createRunLeases, type RunLeases } from '../src/run-leases.ts';
import { createRunHandler } from '../src/run-orchestrator.ts';
import { createStepLogPace } from '../src/step-log.ts';
import type { WorkflowRuntime } from '../src/workflow/workflow-runtime.ts';
import { framesOf, openRunRig, type RunRig, settled, startedRun, takenRun } from './run-rig.ts';
import { planOf, result } from './workflow-fixtures.ts';

let rig: RunRig;
let leases: RunLeases;
let keepAlive: RunKeepAlive;
let compiler: Responder;
/** What context compile answers next. */
const compileReply: ContextCompileReply = {
  v: 1,
  ok: true,
  messages: [{ role: 'user', content: '写第一章' }],
};
/** Every compile request the stand-in context service answered. */
const compileRequests: ContextCompileRequest[] = [];

beforeAll(async () => {
  rig = await openRunRig('run-orchestrator', () => settled('charge'));
  leases = createRunLeases(
    { bus: rig.bus, redis: rig.redis, keys: rig.keys, logger: rig.logger },
    { ttlMs: 30_000, scanMs: 10_000 },
  );
  keepAlive = createRunKeepAlive(
    { redis: rig.redis, keys: rig.keys, logger: rig.logger },
    { intervalMs: 1_000, ttlMs: 60_000 },
  );
  compiler = serveRequests(
    rig.bus,
    rig.bus.names.contextCompile,
    { request: ContextCompileRequest, reply: ContextCompileReply },
    {
      handle: async (request) => {
        compileRequests.push(request);
        return compileReply;
      },
      invalidReply: { v: 1, ok: false, code: 'invalid_bus_message' },
      failureReply: { v: 1, ok: false, code: 'internal_error' },
    },
    rig.logger,
  );
});
afterAll(async () => {
  leases.stop();
  keepAlive.stop();
  await compiler.stop();
  await rig.close();
});

/** The workflow port: a quick plan (one writer step), no held text, directives fixed. */
const workflow: WorkflowRuntime = {
  plan: async (start) => planOf({}, { message: start.message }),
  beforeDispatch: async () => ({ directive: '写' }),
  beforeFinish: async () => ({}),
};

const handler = (port: WorkflowRuntime = workflow, catchUps?: CatchUpPace) =>
  createRunHandler({
    ...(catchUps ? { catchUps } : {}),
    bus: rig.bus,
    pool: rig.database.pool,
    redis: rig.redis,
    keys: rig.keys,
    logger: rig.logger,
    phases: createPhaseWriter(rig.database.pool, rig.logger),
    workflow: port,
    leases,
    keepAlive,
    requestTimeoutMs: 2_000,
    requestDeadlineMs: 4_000,
    settings: {
      maxIterations: 6,
      wallClockMs: 120_000,
      stopGraceMs: 30_000,
      stopFlagTtlMs: 60_000,
    },
  });

function delivery(): DeliveryContext {
  return {
    message: { working: () => {} } as unknown as DeliveryContext['message'],
    subject: 'runs.start.test',
    deliveryCount: 1,
    ackSubject: `$JS.ACK.test.${crypto.randomUUID()}`,
    shutdown: new AbortController().signal,
  };
}

/** A writer standing in for the worker: answers each task of the run with the given result. */
function answerTasks(runId: string, reply: (task: TaskEnvelope) => Parameters<typeof result>[2]) {
  const tasks: TaskEnvelope[] = [];
  const subscription = rig.bus.connection.subscribe(rig.bus.names.task('writer', runId), {
    callback: (_error, message) => {
      const task = decodeEnvelope(TaskEnvelope, message.subject, message.data);
      tasks.push(task);
      void publishEnvelope(rig.bus, rig.bus.names.steps(runId), StepRecordEnvelope, {
        v: 1,
        kind: 'result',
        run_id: runId,
        result: result(task.step, 'writer', reply(task)),
      });
    },
  });
  return { tasks, close: () => subscription.unsubscribe() };
}

/** The launch's `run_started`, as the gateway stores it before it queues the run. */
function publishRunStarted(start: Awaited<ReturnType<typeof startedRun>>) {
  return publishFrame(
    rig.bus,
    frame('run_started', start.run_id, {
      session_id: start.session_id,
      project_id: start.project_id,
      generation_mode: 'fast',
    }),
  );
}

/**
 * Runs a start to its end with a stand-in writer that completes each task, recording where the
 * router's reads of stored messages start.
 */
async function runRecordingReads(start: Awaited<ReturnType<typeof startedRun>>) {
  const worker = answerTasks(start.run_id, () => ({ final_text: '写好了。' }));
  const reads = recordStoredReads(rig.bus);
  try {
    expect(await handler()(start, delivery())).toBe(ack);
  } finally {
    reads.restore();
    worker.close();
  }
  return { reads, worker };
}

describe('router run orchestrator', () => {
  it('dispatches the plan’s step by reference and ends the run on its result', async () => {
    const start = await startedRun(rig);
    const worker = answerTasks(start.run_id, () => ({ final_text: '写好了。' }));
    try {
      expect(await handler()(start, delivery())).toBe(ack);
    } finally {
      worker.close();
    }
    // The task names what the worker compiles its context from; the router compiles nothing
    // (docs/decisions/0033-dispatch-by-reference.md).
    expect(worker.tasks).toMatchObject([
      {
        step: 0,
        role: 'writer',
        directive: '写',
        context: {
          message: start.message,
          focus_file_id: start.focus_file_id,
          attached_file_ids: start.attached_file_ids,
          ui_language: start.ui_language,
        },
      },
    ]);
    expect(worker.tasks[0]).not.toHaveProperty('messages');
    expect(compileRequests.filter((request) => request.run_id === start.run_id)).toEqual([]);
    expect((await framesOf(rig, start.run_id)).map((frame) => frame.type)).toEqual([
      'workflow_complete',
      'done',
    ]);
    expect(await getRun(rig.database.pool, start.run_id)).toMatchObject({
      phase: 'done',
      stopReason: 'completed',
    });
  });

  it('a step the worker reports failed before it started ends the run with its code', async () => {
    const start = await startedRun(rig);
    const worker = answerTasks(start.run_id, () => ({
      outcome: 'failed',
      stop_reason: 'error',
      error_code: 'context_unavailable',
    }));
    try {
      expect(await handler()(start, delivery())).toBe(ack);
    } finally {
      worker.close();
    }
    const frames = await framesOf(rig, start.run_id);
    expect(frames.map((frame) => frame.type)).toEqual(['error', 'done']);
    expect(frames[0]).toMatchObject({ code: 'context_unavailable' });
  });

  it('a run stopped before its first step ends stopped without dispatching', async () => {
    const start = await startedRun(rig);
    await requestStop(rig.bus, rig.redis, rig.keys, start.run_id, 'user_stopped', 60_000);
    const worker = answerTasks(start.run_id, () => ({}));
    try {
      expect(await handler()(start, delivery())).toBe(ack);
    } finally {
      worker.close();
    }
    expect(worker.tasks).toEqual([]);
    const frames = await framesOf(rig, start.run_id);
    expect(frames.map((frame) => frame.type)).toEqual(['workflow_stopped', 'done']);
    expect(frames[0]).toMatchObject({ reason: 'user_stopped' });
  });

  it('a run that already ended only gets its done frame again (the last router died before it)', async () => {
    const start = await takenRun(rig);
    await finishRun(rig.database.pool, start.run_id, { phase: 'done', stopReason: 'completed' });
    expect(await handler()(start, delivery())).toBe(ack);
    expect((await framesOf(rig, start.run_id)).map((frame) => frame.type)).toEqual(['done']);
  });

  it("a first take finds where the run begins from the stream's end, and settles and archives from there", async () => {
    const start = await startedRun(rig);
    const started = await publishRunStarted(start);
    const { reads, worker } = await runRecordingReads(start);
    expect(worker.tasks).toHaveLength(1);
    expect(rig.settles.at(-1)).toMatchObject({ run_id: start.run_id, started_seq: started.seq });
    // One get from the stream's end found it; nothing was searched by time, and the archive's
    // read (the stand-in billing hands back no record) began there.
    expect(reads.gets).toContainEqual({ last_by_subj: rig.bus.names.events(start.run_id) });
    expect(reads.consumers.map((config) => [config.deliver_policy, config.opt_start_seq])).toEqual([
      ['by_start_sequence', started.seq],
    ]);
  });

  it('a first take whose get finds no run_started ends without a search by time of its own', async () => {
    const start = await startedRun(rig);
    const { reads, worker } = await runRecordingReads(start);
    expect(worker.tasks).toHaveLength(1);
    // The settlement reads from the launch time itself; the only search by time is the archive's.
    expect(rig.settles.at(-1)).not.toHaveProperty('started_seq');
    expect(reads.consumers.filter((config) => config.deliver_policy === 'by_start_time')).toHaveLength(1);
  });

  it('a takeover finds where the run begins from its launch time, and reads its step records from there', async () => {
    const taken = await takenRun(rig);
    const started = await publishRunStarted(taken);
    // The run's frames went on after run_started (the router that died published them).
    await publishFrame(rig.bus, frame('agent_start', taken.run_id, { agent: 'writer', step: 0 }));
    const { reads, worker } = await runRecordingReads(taken);
    // One search by time, at the take: the step log and the settlement both start at run_started.
    expect(reads.consumers.filter((config) => config.deliver_policy === 'by_start_time')).toHaveLength(1);
    const stepReads = reads.gets.filter((get) => get.next_by_subj === rig.bus.names.steps(taken.run_id));
    expect(stepReads[0]?.seq).toBe(started.seq);
    expect(rig.settles.at(-1)).toMatchObject({ run_id: taken.run_id, started_seq: started.seq });
    expect(worker.tasks).toHaveLength(1);
  });

  it('the runs one handler holds wait for their steps on one budget of catch-ups', async () => {
    const pace = createStepLogPace();
    const starts = [await startedRun(rig), await startedRun(rig)];
    // A stand-in writer that keeps both tasks unanswered until the test answers them.
    const tasks: TaskEnvelope[] = [];
    const subscriptions = starts.map((start) =>
      rig.bus.connection.subscribe(rig.bus.names.task('writer', start.run_id), {
        callback: (_error, message) =>
          void tasks.push(decodeEnvelope(TaskEnvelope, message.subject, message.data)),
      }),
    );
    try {
      const run = handler(workflow, pace);
      const ending = starts.map((start) => run(start, delivery()));
      await vi.waitFor(
        () => {
          expect(pace.waitingNow).toBe(2);
          expect(tasks).toHaveLength(2);
        },
        { timeout: 30_000, interval: 20 },
      );
      for (const task of tasks)
        await publishEnvelope(rig.bus, rig.bus.names.steps(task.run_id), StepRecordEnvelope, {
          v: 1,
          kind: 'result',
          run_id: task.run_id,
          result: result(task.step, 'writer', { final_text: '写好了。' }),
        });
      expect(await Promise.all(ending)).toEqual([ack, ack]);
      expect(pace.waitingNow).toBe(0);
    } finally {
      for (const subscription of subscriptions) subscription.unsubscribe();
    }
  });

  it('a start for a run that does not exist is terminated', async () => {
    const start = { ...(await startedRun(rig)), run_id: crypto.randomUUID() };
    expect(await handler()(start, delivery())).toMatchObject({ kind: 'term' });
  });
});
