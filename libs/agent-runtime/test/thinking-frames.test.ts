import { randomUUID } from 'node:crypto';
import { type Bus, readStored } from '@quill/bus';
import { EventEnvelope, type SseFrame } from '@quill/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeTestBus, openTestBus } from '../../../test/support/test-bus.ts';
import { createStepEmitter } from '../src/frame-emitter.ts';

let bus: Bus;

beforeAll(async () => {
  bus = await openTestBus('thk', 'test');
});

afterAll(() => closeTestBus(bus));

async function storedFrames(runId: string): Promise<SseFrame[]> {
  const items = await readStored(bus, {
    stream: bus.names.streams.events,
    subject: bus.names.events(runId),
    schema: EventEnvelope,
  });
  return items.map((item) => item.envelope!.frame);
}

describe('reasoning frames', () => {
  it('coalesces a burst of reasoning deltas like text, and keeps it apart from the text after it', async () => {
    const runId = randomUUID();
    const emitter = createStepEmitter(
      bus,
      { runId, step: 1, attempt: 0, agent: 'writer' },
      // A window no test run outlasts: frames are cut by size alone, however slow the machine.
      { flushMs: 60_000, flushBytes: 512 },
    );
    // 2,040 characters in 614 deltas, the shape a reasoning model streams (one to six characters each).
    const deltas = Array.from({ length: 614 }, (_, index) => '思考中。'.repeat(2).slice(0, 1 + (index % 6)));
    const reasoning = deltas.join('');
    for (const delta of deltas) emitter.thinking(delta);
    emitter.text('好的，');
    emitter.text('开始写。');
    await emitter.close();

    const frames = await storedFrames(runId);
    const thinking = frames.filter((value) => value.type === 'thinking');
    // At most the first delta on its own (after an idle gap), then batches of flushBytes characters.
    expect(thinking.length).toBeLessThanOrEqual(1 + Math.ceil(reasoning.length / 512));
    expect(thinking.map((value) => (value.type === 'thinking' ? value.content : '')).join('')).toBe(
      reasoning,
    );
    expect(thinking.every((value) => value.type === 'thinking' && value.agent === 'writer')).toBe(true);
    // Text never joins a thinking frame, and comes after all of the reasoning.
    expect(frames.at(-1)).toMatchObject({ type: 'text', content: '好的，开始写。' });
    expect(frames.slice(0, -1).every((value) => value.type === 'thinking')).toBe(true);
  });
});
