import { randomUUID } from 'node:crypto';
import { EventEnvelope, frame, StepRecordEnvelope, UsageEnvelope } from '@quill/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeTestBus, openTestBus, recordStoredReads } from '../../../test/support/test-bus.ts';
import {
  type Bus,
  publishEnvelope,
  publishFrame,
  RUN_RECORD_CLOCK_MARGIN_MS,
  readStored,
  readStoredRun,
  runStartedIfNewest,
  runStartSeq,
} from '../src/index.ts';

// nats-server and this process share the machine's clock; a few milliseconds between a message's
// store and the time taken keep the two on either side of it.
const tick = () => new Promise((resolve) => setTimeout(resolve, 5));

let bus: Bus;

beforeAll(async () => {
  bus = await openTestBus('rrr', 'test');
});

afterAll(() => closeTestBus(bus));

const text = (runId: string, content: string) => frame('text', runId, { agent: 'writer', content });
const runStarted = (runId: string) =>
  frame('run_started', runId, {
    session_id: randomUUID(),
    project_id: randomUUID(),
    generation_mode: 'fast',
  });

/**
 * A run's record as a launch, a router and a writer store it, with another run's frames around it;
 * the sequence its `run_started` was stored at.
 */
async function storeRun(runId: string, userId: string, other: string): Promise<number> {
  await publishFrame(bus, text(other, 'before'));
  const started = await publishFrame(bus, runStarted(runId));
  await publishEnvelope(
    bus,
    bus.names.steps(runId),
    StepRecordEnvelope,
    { v: 1, kind: 'dispatched', run_id: runId, step: 1, role: 'writer' },
    {},
  );
  for (const content of ['第一段', '第二段']) {
    await publishFrame(bus, text(runId, content));
    await publishFrame(bus, text(other, content));
  }
  await publishEnvelope(
    bus,
    bus.names.usage(runId),
    UsageEnvelope,
    {
      v: 1,
      run_id: runId,
      user_id: userId,
      call_index: 1000,
      attempt: 0,
      role: 'writer',
      provider: 'fake',
      model: 'fake-1',
      usage: { prompt_tokens: 10, completion_tokens: 4, total_tokens: 14, usage_source: 'provider' },
    },
    {},
  );
  await publishFrame(bus, frame('workflow_complete', runId, {}));
  return started.seq;
}

describe('reading a run record from its launch time', () => {
  it('a read given a time starts at the first message stored at or after it, and names it', async () => {
    const runId = randomUUID();
    for (const content of ['old 1', 'old 2']) await publishFrame(bus, text(runId, content));
    await tick();
    const since = new Date();
    await tick();
    const later = await publishFrame(bus, text(runId, 'new 1'));
    await publishFrame(bus, text(runId, 'new 2'));
    let named: number | undefined;
    const read = await readStored(bus, {
      stream: bus.names.streams.events,
      subject: bus.names.events(runId),
      schema: EventEnvelope,
      since,
      onStart: (seq) => {
        named = seq;
      },
    });
    expect(
      read.map((item) => (item.envelope?.frame.type === 'text' ? item.envelope.frame.content : '')),
    ).toEqual(['new 1', 'new 2']);
    expect(named).toBe(later.seq);
  });

  it('reads the same frames, step records and usage as a read from the stream start', async () => {
    const runId = randomUUID();
    const userId = randomUUID();
    const launchedAt = new Date().toISOString();
    await storeRun(runId, userId, randomUUID());

    const whole = await readStoredRun(bus, runId, { usage: true });
    const timed = await readStoredRun(bus, runId, { launchedAt, usage: true });
    expect(whole.frames.map((item) => item.frame.type)).toEqual([
      'run_started',
      'text',
      'text',
      'workflow_complete',
    ]);
    expect(whole.steps).toHaveLength(1);
    expect(whole.usage).toHaveLength(1);
    expect(timed).toEqual(whole);
    expect(timed.reread).toBe(false);
  });

  it('starts at the launch time: what the subject held before it is not read', async () => {
    const runId = randomUUID();
    // Never stored before a run's launch in service; here it marks where the read began.
    await publishFrame(bus, text(runId, 'stored before the launch'));
    await tick();
    const launchedAt = new Date(Date.now() + RUN_RECORD_CLOCK_MARGIN_MS).toISOString();
    await tick();
    await storeRun(runId, randomUUID(), randomUUID());

    const timed = await readStoredRun(bus, runId, { launchedAt, usage: true });
    expect(timed.frames[0]?.frame.type).toBe('run_started');
    expect(timed.frames).toHaveLength(4);
    expect(timed.steps).toHaveLength(1);
    expect(timed.usage).toHaveLength(1);
    // From the stream's start, the earlier frame is there.
    expect((await readStoredRun(bus, runId)).frames).toHaveLength(5);
  });

  it('reads the whole record again when the time fell after the run start (clocks apart)', async () => {
    const runId = randomUUID();
    await publishFrame(bus, runStarted(runId));
    await tick();
    // The launch time as a clock ahead of the server's by more than the margin would give it.
    const launchedAt = new Date(Date.now() + RUN_RECORD_CLOCK_MARGIN_MS).toISOString();
    await tick();
    await publishFrame(bus, text(runId, '第一段'));
    await publishEnvelope(
      bus,
      bus.names.steps(runId),
      StepRecordEnvelope,
      { v: 1, kind: 'dispatched', run_id: runId, step: 1, role: 'writer' },
      {},
    );

    const timed = await readStoredRun(bus, runId, { launchedAt });
    expect(timed.reread).toBe(true);
    expect(timed.frames.map((item) => item.frame.type)).toEqual(['run_started', 'text']);
    expect(timed.steps).toHaveLength(1);
    // Ahead of everything stored: the time read finds nothing, and the whole record is read.
    const ahead = new Date(Date.now() + 2 * RUN_RECORD_CLOCK_MARGIN_MS).toISOString();
    const whole = await readStoredRun(bus, runId, { usage: true });
    expect(await readStoredRun(bus, runId, { launchedAt: ahead, usage: true })).toEqual({
      ...whole,
      reread: true,
    });
  });
});

describe("reading a run record from its run_started's sequence", () => {
  it('reads every subject from there at once: one consumer by sequence, no search by time', async () => {
    const runId = randomUUID();
    const startedSeq = await storeRun(runId, randomUUID(), randomUUID());
    const whole = await readStoredRun(bus, runId, { usage: true });
    const reads = recordStoredReads(bus);
    let known: Awaited<ReturnType<typeof readStoredRun>>;
    try {
      known = await readStoredRun(bus, runId, {
        startedSeq,
        launchedAt: new Date().toISOString(),
        usage: true,
      });
    } finally {
      reads.restore();
    }
    expect(known).toEqual(whole);
    expect(known.reread).toBe(false);
    expect(reads.consumers.map((config) => [config.deliver_policy, config.opt_start_seq])).toEqual([
      ['by_start_sequence', startedSeq],
    ]);
    // The step records and usage reports are read from the same place, not from the stream's start.
    const firstGets = reads.gets.filter(
      (get) => get.seq !== undefined && get.next_by_subj !== bus.names.events(runId),
    );
    expect(firstGets.map((get) => get.next_by_subj).sort()).toEqual(
      [bus.names.steps(runId), bus.names.usage(runId)].sort(),
    );
    expect(firstGets.every((get) => get.seq! >= startedSeq)).toBe(true);
  });

  it('reads the record again from the launch time when the sequence is not its run_started', async () => {
    const runId = randomUUID();
    const launchedAt = new Date().toISOString();
    const startedSeq = await storeRun(runId, randomUUID(), randomUUID());
    const whole = await readStoredRun(bus, runId, { usage: true });
    const reads = recordStoredReads(bus);
    let wrong: Awaited<ReturnType<typeof readStoredRun>>;
    try {
      // One past it: the read begins at the run's step record, not its first frame.
      wrong = await readStoredRun(bus, runId, { startedSeq: startedSeq + 1, launchedAt, usage: true });
    } finally {
      reads.restore();
    }
    expect(wrong).toEqual({ ...whole, reread: true });
    expect(reads.consumers.map((config) => config.deliver_policy)).toEqual([
      'by_start_sequence',
      'by_start_time',
    ]);
  });
});

describe('where a run begins, while run_started is its newest frame', () => {
  it("is run_started's sequence, from one get at the stream's end; unknown once another frame came", async () => {
    const runId = randomUUID();
    expect(await runStartedIfNewest(bus, runId)).toBeUndefined();
    await publishFrame(bus, text(randomUUID(), 'another run'));
    const started = await publishFrame(bus, runStarted(runId));
    await publishFrame(bus, text(randomUUID(), 'another run after it'));
    const reads = recordStoredReads(bus);
    try {
      expect(await runStartedIfNewest(bus, runId)).toBe(started.seq);
    } finally {
      reads.restore();
    }
    expect(reads.gets).toEqual([{ last_by_subj: bus.names.events(runId) }]);
    expect(reads.consumers).toEqual([]);
    await publishFrame(bus, text(runId, '第一段'));
    expect(await runStartedIfNewest(bus, runId)).toBeUndefined();
  });
});

describe('where a run begins, from its launch time', () => {
  it('is the sequence before its run_started, found without a read from the stream start', async () => {
    const runId = randomUUID();
    const other = randomUUID();
    await publishFrame(bus, text(other, 'another run before'));
    await tick();
    // Read from the launch time less the margin: here, just after the other run's frame.
    const launchedAt = new Date(Date.now() + RUN_RECORD_CLOCK_MARGIN_MS).toISOString();
    await tick();
    const started = await publishFrame(bus, runStarted(runId));
    await publishFrame(bus, text(runId, '第一段'));
    const reads = recordStoredReads(bus);
    try {
      expect(await runStartSeq(bus, runId, launchedAt)).toBe(started.seq - 1);
    } finally {
      reads.restore();
    }
    // One consumer made by time, and one direct get from the time's place, not from sequence 1.
    expect(reads.consumers.map((config) => config.deliver_policy)).toEqual(['by_start_time']);
    expect(reads.gets).toEqual([{ seq: started.seq, next_by_subj: bus.names.events(runId) }]);
  });

  it('is the stream start when the time fell after the run began, or the run has no run_started', async () => {
    const runId = randomUUID();
    await publishFrame(bus, runStarted(runId));
    await tick();
    const ahead = new Date(Date.now() + RUN_RECORD_CLOCK_MARGIN_MS).toISOString();
    await tick();
    await publishFrame(bus, text(runId, '第一段'));
    expect(await runStartSeq(bus, runId, ahead)).toBe(0);
    expect(await runStartSeq(bus, runId, 'not a time')).toBe(0);
    const headless = randomUUID();
    await publishFrame(bus, text(headless, 'no run_started'));
    expect(await runStartSeq(bus, headless, new Date(Date.now() - 1000).toISOString())).toBe(0);
    expect(await runStartSeq(bus, randomUUID(), new Date().toISOString())).toBe(0);
  });
});
