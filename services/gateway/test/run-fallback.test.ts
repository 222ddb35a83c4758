import { randomUUID } from 'node:crypto';
import { type Bus, publishFrame, readStored } from '@quill/bus';
import { EventEnvelope, frame, isTerminalFrame } from '@quill/contracts';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeTestBus, openTestBus } from '../../../test/support/test-bus.ts';
import { endRunIfUnfinished } from '../src/run-fallback.ts';

let bus: Bus;
const logger = pino({ level: 'silent' });

beforeAll(async () => {
  bus = await openTestBus('fb', 'fallback-test', { runMaxDeliver: 3 });
});

afterAll(() => closeTestBus(bus));

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
    await endRunIfUnfinished(bus, runId, logger);
    await endRunIfUnfinished(bus, runId, logger);
    const frames = await framesOf(runId);
    expect(frames.map((value) => value.type)).toEqual(['text', 'error', 'done']);
    expect(frames[1]).toMatchObject({ code: 'worker_lost', retryable: true });
  });

  it('adds only done when the run already has its terminal frame, and nothing when it has done', async () => {
    const runId = randomUUID();
    await publishFrame(bus, frame('workflow_complete', runId, {}));
    await endRunIfUnfinished(bus, runId, logger);
    expect((await framesOf(runId)).map((value) => value.type)).toEqual(['workflow_complete', 'done']);
    await endRunIfUnfinished(bus, runId, logger);
    const frames = await framesOf(runId);
    expect(frames.filter(isTerminalFrame)).toHaveLength(1);
    expect(frames).toHaveLength(2);
  });
});
