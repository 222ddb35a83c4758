import { randomUUID } from 'node:crypto';
import { publishEnvelope, subscribePublished } from '@quill/bus';
import { StepRecordEnvelope } from '@quill/contracts';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  closeTestBus,
  countStoredGets,
  openTestBus,
  recordStoredReads,
  type StoredGet,
} from '../../../test/support/test-bus.ts';
import { createStepLogPace, openStepLog } from '../src/step-log.ts';
import { result } from './workflow-fixtures.ts';

// The router's step log over a real nats-server: live records by core subscription, stored ones
// and what core delivery lost by sequence (docs/decisions/0041-broker-work-per-launch.md).
type Bus = Awaited<ReturnType<typeof openTestBus>>;
let bus: Bus;
const logger = pino({ level: 'silent' });

beforeAll(async () => {
  bus = await openTestBus('steplog', 'step-log-test');
});
afterAll(async () => {
  await closeTestBus(bus);
});

const dispatched = (runId: string, step: number) =>
  publishEnvelope(bus, bus.names.steps(runId), StepRecordEnvelope, {
    v: 1,
    kind: 'dispatched',
    run_id: runId,
    step,
    role: 'writer',
  });
const finished = (runId: string, step: number) =>
  publishEnvelope(bus, bus.names.steps(runId), StepRecordEnvelope, {
    v: 1,
    kind: 'result',
    run_id: runId,
    result: result(step, 'writer', { final_text: `step ${step}` }),
  });
/** Where each recorded direct get on `subject` started (`next_by_subj` from `seq`). */
const startsOn = (gets: StoredGet[], subject: string) =>
  gets.flatMap((get) => (get.next_by_subj === subject ? [get.seq ?? 0] : []));
const consumers = async () => (await bus.jsm.streams.info(bus.names.streams.events)).state.consumer_count;
const never = new AbortController().signal;
const soon = () => Date.now() + 30_000;

describe('the router’s step log', () => {
  it('folds what was stored before it opened, then wakes on a live result, with no consumer', async () => {
    const runId = randomUUID();
    const consumersBefore = await consumers();
    await dispatched(runId, 0);
    await finished(runId, 0);
    await dispatched(runId, 1);
    const log = await openStepLog(bus, runId, logger);
    try {
      // A takeover lands where the stored records left the run.
      expect([...log.state.dispatched.keys()]).toEqual([0, 1]);
      expect(log.state.results.get(0)?.final_text).toBe('step 0');
      expect(log.state.lastSeq).toBeGreaterThan(0);
      expect(await consumers()).toBe(consumersBefore);
      const waiting = log.waitForResult(1, soon(), never);
      await finished(runId, 1);
      expect(await waiting).toBe(true);
      expect(log.state.results.get(1)?.final_text).toBe('step 1');
      // A duplicate publish (a retried worker) changes nothing.
      await finished(runId, 1);
      expect(log.state.results.size).toBe(2);
    } finally {
      await log.close();
    }
  });

  it('opens without reading the stored log when the take says nothing can be stored yet', async () => {
    const runId = randomUUID();
    // A record stored before the log opens: only a read by sequence could find it.
    await dispatched(runId, 0);
    const gets = countStoredGets(bus);
    try {
      const first = await openStepLog(bus, runId, logger, { storedBefore: Promise.resolve(false) });
      try {
        expect(gets.count).toBe(0);
        expect(first.state.dispatched.size).toBe(0);
        // Live records still fold.
        const waiting = first.waitForResult(0, soon(), never);
        await finished(runId, 0);
        expect(await waiting).toBe(true);
        expect(gets.count).toBe(0);
      } finally {
        await first.close();
      }
      // A takeover reads what is stored.
      const takeover = await openStepLog(bus, runId, logger, { storedBefore: Promise.resolve(true) });
      try {
        expect(gets.count).toBeGreaterThan(0);
        expect([...takeover.state.dispatched.keys()]).toEqual([0]);
        expect(takeover.state.results.get(0)?.final_text).toBe('step 0');
      } finally {
        await takeover.close();
      }
      // A take that failed fails the open, with the take's error.
      await expect(
        openStepLog(bus, runId, logger, { storedBefore: Promise.reject(new Error('take failed')) }),
      ).rejects.toThrow('take failed');
    } finally {
      gets.restore();
    }
  });

  it('finds a result core delivery lost by reading the stored log again', async () => {
    const runId = randomUUID();
    // A subscription that loses every message: only the catch-up reads can see the result.
    const deaf: typeof subscribePublished = (deafBus, subject, handlers) =>
      subscribePublished(deafBus, subject, { message: () => undefined, reconnected: handlers.reconnected });
    const pace = createStepLogPace(50);
    const log = await openStepLog(bus, runId, logger, { pace, subscribe: deaf });
    try {
      await dispatched(runId, 0);
      const waiting = log.waitForResult(0, soon(), never);
      await finished(runId, 0);
      expect(await waiting).toBe(true);
      expect(log.state.dispatched.get(0)).toBe('writer');
      expect(log.state.results.get(0)?.final_text).toBe('step 0');
    } finally {
      await log.close();
    }
  });

  it('on a first take, catches up from the run’s first dispatch, not from the stream’s first message', async () => {
    const runId = randomUUID();
    const subject = bus.names.steps(runId);
    // Other runs' records before this run's: a read from the stream's start would pass them.
    await dispatched(randomUUID(), 0);
    const deaf: typeof subscribePublished = (deafBus, deafSubject, handlers) =>
      subscribePublished(deafBus, deafSubject, {
        message: () => undefined,
        reconnected: handlers.reconnected,
      });
    const reads = recordStoredReads(bus);
    const log = await openStepLog(bus, runId, logger, {
      catchUpMs: 50,
      subscribe: deaf,
      storedBefore: Promise.resolve(false),
    });
    try {
      const ack = await dispatched(runId, 0);
      log.stored(ack.seq);
      const waiting = log.waitForResult(0, soon(), never);
      await finished(runId, 0);
      expect(await waiting).toBe(true);
      expect(log.state.results.get(0)?.final_text).toBe('step 0');
      const starts = startsOn(reads.gets, subject);
      expect(starts.length).toBeGreaterThan(0);
      expect(Math.min(...starts)).toBe(ack.seq);
    } finally {
      reads.restore();
      await log.close();
    }
  });

  it('a takeover reads the stored log from where the run begins, not from the stream’s first message', async () => {
    const runId = randomUUID();
    const subject = bus.names.steps(runId);
    await dispatched(randomUUID(), 0);
    const begins = (await dispatched(randomUUID(), 0)).seq;
    await dispatched(runId, 0);
    await finished(runId, 0);
    const reads = recordStoredReads(bus);
    try {
      const takeover = await openStepLog(bus, runId, logger, {
        storedBefore: Promise.resolve(true),
        startAfter: async () => begins,
      });
      try {
        expect([...takeover.state.dispatched.keys()]).toEqual([0]);
        expect(takeover.state.results.get(0)?.final_text).toBe('step 0');
        expect(startsOn(reads.gets, subject)[0]).toBe(begins + 1);
      } finally {
        await takeover.close();
      }
    } finally {
      reads.restore();
    }
  });

  it('after a read at open, a record it stored does not move its catch-ups past what it missed', async () => {
    const runId = randomUUID();
    await dispatched(runId, 0);
    const deaf: typeof subscribePublished = (deafBus, deafSubject, handlers) =>
      subscribePublished(deafBus, deafSubject, {
        message: () => undefined,
        reconnected: handlers.reconnected,
      });
    const takeover = await openStepLog(bus, runId, logger, {
      catchUpMs: 50,
      subscribe: deaf,
      storedBefore: Promise.resolve(true),
    });
    try {
      // Stored after the read at open and lost in core delivery, then a record of its own after it.
      await finished(runId, 0);
      const ack = await dispatched(runId, 1);
      takeover.stored(ack.seq);
      expect(await takeover.waitForResult(0, Date.now() + 10_000, never)).toBe(true);
      expect(takeover.state.results.get(0)?.final_text).toBe('step 0');
    } finally {
      await takeover.close();
    }
  });

  it('skips a stored record that does not parse once, not at every catch-up', async () => {
    const runId = randomUUID();
    const lines: string[] = [];
    const recording = pino({ level: 'error' }, { write: (line: string) => void lines.push(line) });
    // The newest record is the bad one: nothing after it moves the read on.
    await dispatched(runId, 0);
    await bus.js.publish(bus.names.steps(runId), new TextEncoder().encode('{"v":2}'));
    const log = await openStepLog(bus, runId, recording, { catchUpMs: 20 });
    try {
      expect(log.state.dispatched.get(0)).toBe('writer');
      // A dozen catch-ups read nothing new.
      expect(await log.waitForResult(0, Date.now() + 300, never)).toBe(false);
      expect(lines.filter((line) => line.includes('invalid step record skipped'))).toHaveLength(1);
    } finally {
      await log.close();
    }
  });

  it('counts in its process’s catch-up budget while it waits, whichever way the wait ends', async () => {
    const pace = createStepLogPace(50);
    const [found, stopped, late] = [randomUUID(), randomUUID(), randomUUID()];
    const logs = await Promise.all(
      [found, stopped, late].map((runId) => openStepLog(bus, runId, logger, { pace })),
    );
    try {
      const stop = new AbortController();
      const waits = [
        logs[0]!.waitForResult(0, soon(), never),
        logs[1]!.waitForResult(0, soon(), stop.signal),
        logs[2]!.waitForResult(0, Date.now() + 200, never),
      ];
      expect(pace.waitingNow).toBe(3);
      await finished(found, 0);
      expect(await waits[0]).toBe(true);
      stop.abort();
      expect(await waits[1]).toBe(false);
      expect(await waits[2]).toBe(false);
      expect(pace.waitingNow).toBe(0);
      // A result already folded is no wait at all.
      expect(await logs[0]!.waitForResult(0, soon(), never)).toBe(true);
      expect(pace.waitingNow).toBe(0);
    } finally {
      await Promise.all(logs.map((log) => log.close()));
    }
  });

  it('gives up at the deadline or when stopped', async () => {
    const runId = randomUUID();
    const log = await openStepLog(bus, runId, logger, { catchUpMs: 50 });
    try {
      expect(await log.waitForResult(0, Date.now() + 200, never)).toBe(false);
      const stop = new AbortController();
      const waiting = log.waitForResult(0, soon(), stop.signal);
      stop.abort();
      expect(await waiting).toBe(false);
    } finally {
      await log.close();
    }
  });
});
