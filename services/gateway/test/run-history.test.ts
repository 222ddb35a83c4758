import { randomUUID } from 'node:crypto';
import { type Bus, publishFrame } from '@quill/bus';
import { frame } from '@quill/contracts';
import { createTestDatabase, type TestDatabase } from '@quill/db/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeTestBus, openTestBus, recordStoredReads } from '../../../test/support/test-bus.ts';
import { readRunHistory } from '../src/run-history.ts';

let bus: Bus;
let database: TestDatabase;

beforeAll(async () => {
  database = await createTestDatabase();
  bus = await openTestBus('rh', 'run-history-test');
});

afterAll(async () => {
  await closeTestBus(bus);
  await database?.drop();
});

describe('a run history read from the stream (not archived yet)', () => {
  it('gives the frames after `after` with their ids, read from there', async () => {
    const runId = randomUUID();
    const seqs: number[] = [];
    for (const content of ['一', '二', '三', '四']) {
      seqs.push((await publishFrame(bus, frame('text', runId, { agent: 'writer', content }))).seq);
    }
    const whole = await readRunHistory(bus, database.pool, runId, 0);
    expect(whole.source).toBe('stream');
    expect(whole.events.map((event) => event.id)).toEqual(seqs);

    const consumer = spyOnConsumerStart(bus);
    const tail = await readRunHistory(bus, database.pool, runId, seqs[1]!);
    consumer.restore();
    expect(tail.events.map((event) => event.id)).toEqual(seqs.slice(2));
    expect(tail.events.map((event) => (event.frame.type === 'text' ? event.frame.content : ''))).toEqual([
      '三',
      '四',
    ]);
    // The read began after `after`, not at the stream's first message.
    expect(consumer.startSeqs).toEqual([seqs[1]! + 1]);
  });
});

describe('a run history read from the run’s beginning', () => {
  it('starts at the run’s run_started, found from its launch time, and gives every frame', async () => {
    const runId = randomUUID();
    const launchedAt = new Date().toISOString();
    const seqs = [
      (
        await publishFrame(
          bus,
          frame('run_started', runId, {
            session_id: randomUUID(),
            project_id: randomUUID(),
            generation_mode: 'fast',
          }),
        )
      ).seq,
    ];
    for (const content of ['一', '二']) {
      seqs.push((await publishFrame(bus, frame('text', runId, { agent: 'writer', content }))).seq);
    }
    const consumer = spyOnConsumerStart(bus);
    const history = await readRunHistory(bus, database.pool, runId, 0, launchedAt);
    consumer.restore();
    expect(history.events.map((event) => event.id)).toEqual(seqs);
    // The first consumer finds where the launch time falls; the read itself starts at run_started.
    expect(consumer.startSeqs.at(-1)).toBe(seqs[0]);
    expect(consumer.startSeqs).not.toContain(1);
  });
});

/** The start sequence of every consumer `bus` makes meanwhile (0 for one made by time). */
function spyOnConsumerStart(target: Bus): { readonly startSeqs: number[]; restore(): void } {
  const reads = recordStoredReads(target);
  return {
    get startSeqs() {
      return reads.consumers.map((config) => config.opt_start_seq ?? 0);
    },
    restore: reads.restore,
  };
}
