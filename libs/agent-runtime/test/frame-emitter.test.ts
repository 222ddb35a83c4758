import { randomUUID } from 'node:crypto';
import { type Bus, countStored, readStored } from '@quill/bus';
import { busNames, EventEnvelope, frame, type SseFrame } from '@quill/contracts';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { closeTestBus, openTestBus } from '../../../test/support/test-bus.ts';
import { uniqueName } from '../../../test/support/urls.ts';
import { createStepEmitter } from '../src/frame-emitter.ts';

const settings = { flushMs: 40, flushBytes: 512 };
let bus: Bus;

beforeAll(async () => {
  bus = await openTestBus('fe', 'test');
});

afterAll(() => closeTestBus(bus));

async function storedFrames(runId: string): Promise<SseFrame[]> {
  const items = await readStored(bus, {
    stream: bus.names.streams.events,
    subject: bus.names.events(runId),
    schema: EventEnvelope,
  });
  expect(items.every((item) => item.invalid === undefined)).toBe(true);
  return items.map((item) => item.envelope!.frame);
}

const identity = (runId: string) => ({ runId, step: 2, attempt: 0, agent: 'writer' as const });

describe('createStepEmitter', () => {
  it('coalesces a burst of tiny text deltas into a few frames', async () => {
    const runId = randomUUID();
    const emitter = createStepEmitter(bus, identity(runId), settings);
    const deltas = Array.from({ length: 200 }, (_, index) => (index % 3 === 0 ? '雨' : `${index % 10}`));
    for (const delta of deltas) emitter.text(delta);
    await emitter.close();

    const frames = await storedFrames(runId);
    expect(frames.length).toBeGreaterThan(0);
    expect(frames.length).toBeLessThan(20);
    expect(frames.length).toBe(emitter.framesPublished);
    expect(
      frames.every((value) => value.type === 'text' && value.agent === 'writer' && value.run_id === runId),
    ).toBe(true);
    const content = frames.map((value) => (value.type === 'text' ? value.content : '')).join('');
    expect(content).toBe(deltas.join(''));
  });

  it('splits a large burst at flushBytes without losing or reordering text', async () => {
    const runId = randomUUID();
    const emitter = createStepEmitter(bus, identity(runId), { flushMs: 60_000, flushBytes: 100 });
    const deltas = Array.from({ length: 300 }, (_, index) => `${index},`);
    for (const delta of deltas) emitter.text(delta);
    await emitter.close();

    const frames = await storedFrames(runId);
    const contents = frames.map((value) => (value.type === 'text' ? value.content : ''));
    expect(contents.join('')).toBe(deltas.join(''));
    // Every frame but the first (sent at once after the idle gap) and the last is a full batch.
    for (const content of contents.slice(1, -1)) expect(content.length).toBeGreaterThanOrEqual(100);
    expect(frames.length).toBeLessThan(deltas.length / 10);
  });

  it('sends a delta after an idle gap at once, coalesces sustained flow without holding its newest delta', async () => {
    const runId = randomUUID();
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    try {
      vi.advanceTimersByTime(1000);
      const emitter = createStepEmitter(bus, identity(runId), settings);
      // 20 tokens/s: every delta comes more than a window after the last frame and goes at once.
      for (const [index, delta] of ['a', 'b', 'c', 'd'].entries()) {
        emitter.text(delta);
        expect(emitter.framesPublished).toBe(index + 1);
        vi.advanceTimersByTime(index < 3 ? 50 : 10);
      }
      // 100 tokens/s: held, and sent at most once per window, by the delta that ends the window.
      for (const delta of ['e', 'f', 'g', 'h', 'i', 'j', 'k']) {
        emitter.text(delta);
        if (delta === 'h') expect(emitter.framesPublished).toBe(5);
        vi.advanceTimersByTime(10);
      }
      // The stream pauses: what it left pending goes out once no delta is due any more.
      expect(emitter.framesPublished).toBe(5);
      vi.advanceTimersByTime(settings.flushMs);
      expect(emitter.framesPublished).toBe(6);
      vi.useRealTimers();
      await emitter.close();
    } finally {
      vi.useRealTimers();
    }
    const contents = (await storedFrames(runId)).map((value) => (value.type === 'text' ? value.content : ''));
    expect(contents).toEqual(['a', 'b', 'c', 'd', 'efgh', 'ijk']);
  });

  it('follows a load-adaptive window: at 20 tokens/s one token per frame while roomy, two once stretched', async () => {
    const runId = randomUUID();
    const window = { ms: 40 };
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    try {
      vi.advanceTimersByTime(1000);
      const emitter = createStepEmitter(bus, identity(runId), { ...settings, flushWindow: window });
      for (const delta of ['a', 'b', 'c']) {
        emitter.text(delta);
        vi.advanceTimersByTime(50);
      }
      expect(emitter.framesPublished).toBe(3);
      // The process saturates: 50 ms apart is now sustained flow inside a 100 ms window.
      window.ms = 100;
      for (const delta of ['d', 'e', 'f', 'g']) {
        emitter.text(delta);
        vi.advanceTimersByTime(50);
      }
      vi.advanceTimersByTime(200);
      vi.useRealTimers();
      await emitter.close();
    } finally {
      vi.useRealTimers();
    }
    const contents = (await storedFrames(runId)).map((value) => (value.type === 'text' ? value.content : ''));
    expect(contents.join('')).toBe('abcdefg');
    expect(contents.slice(0, 3)).toEqual(['a', 'b', 'c']);
    // Stretched: the later tokens share frames, the newest of each frame not held.
    expect(contents.slice(3).length).toBeLessThanOrEqual(3);
  });

  it('never holds a token longer than the window, whatever the pace of the deltas', async () => {
    const runId = randomUUID();
    const window = { ms: 60 };
    // Bursts, 20 and 100 tokens/s, pauses just past the window and gaps just under it.
    const gaps = [
      0, 0, 5, 50, 55, 0, 30, 70, 10, 10, 10, 10, 10, 10, 10, 45, 45, 59, 61, 1, 20, 20, 20, 20, 300,
    ];
    const deltas: string[] = [];
    let worst = 0;
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    try {
      vi.advanceTimersByTime(1000);
      const emitter = createStepEmitter(bus, identity(runId), { ...settings, flushWindow: window });
      let oldestUnsent: number | undefined;
      let published = 0;
      const tick = () => {
        if (emitter.framesPublished > published) {
          published = emitter.framesPublished;
          oldestUnsent = undefined;
        }
        if (oldestUnsent !== undefined) worst = Math.max(worst, performance.now() - oldestUnsent);
      };
      for (const [index, gap] of gaps.entries()) {
        for (let elapsed = 0; elapsed < gap; elapsed++) {
          vi.advanceTimersByTime(1);
          tick();
        }
        const delta = String.fromCharCode(97 + (index % 26));
        deltas.push(delta);
        oldestUnsent ??= performance.now();
        emitter.text(delta);
        tick();
      }
      expect(oldestUnsent).toBeUndefined();
      vi.useRealTimers();
      await emitter.close();
      const frames = await storedFrames(runId);
      expect(frames.map((value) => (value.type === 'text' ? value.content : '')).join('')).toBe(
        deltas.join(''),
      );
      // Some deltas shared a frame: the bound is not bought by sending every token alone.
      expect(frames.length).toBeLessThan(deltas.length);
    } finally {
      vi.useRealTimers();
    }
    expect(worst).toBeLessThanOrEqual(window.ms);
  });

  it('flushes pending text before any other frame, preserving order', async () => {
    const runId = randomUUID();
    const emitter = createStepEmitter(bus, identity(runId), settings);
    const toolCall = frame('tool_call', runId, {
      agent: 'writer',
      tool_call_id: 'call_1',
      tool_name: 'create_file',
      arguments: { title: '第一章' },
    });
    const fileStart = frame('file_start', runId, {
      agent: 'writer',
      file_id: 'file-1',
      title: '第一章',
      file_type: 'chapter',
    });
    for (const delta of ['Let me ', 'write ', 'it.']) emitter.text(delta);
    emitter.emit(toolCall);
    emitter.emit(fileStart);
    for (const delta of ['\n雨', '夜', '。']) emitter.fileDelta('file-1', delta);
    emitter.text('Done');
    emitter.text('.');
    await emitter.close();

    const frames = await storedFrames(runId);
    const summary = frames.map((value) =>
      value.type === 'text' || value.type === 'file_delta' ? `${value.type}:${value.content}` : value.type,
    );
    // Text and file deltas coalesce, but never across a different frame or kind.
    const merged: string[] = [];
    for (const entry of summary) {
      const previous = merged.at(-1);
      const kind = entry.split(':')[0];
      if (previous && (kind === 'text' || kind === 'file_delta') && previous.startsWith(`${kind}:`)) {
        merged[merged.length - 1] = previous + entry.slice(kind.length + 1);
      } else merged.push(entry);
    }
    expect(merged).toEqual([
      'text:Let me write it.',
      'tool_call',
      'file_start',
      'file_delta:\n雨夜。',
      'text:Done.',
    ]);
    expect(frames[summary.indexOf('tool_call')]).toEqual(toolCall);
    expect(frames.find((value) => value.type === 'file_delta')).toMatchObject({ file_id: 'file-1' });
  });

  it('close() resolves only after every frame is stored', async () => {
    const runId = randomUUID();
    const emitter = createStepEmitter(bus, identity(runId), settings);
    for (let index = 0; index < 50; index++) {
      emitter.text(`t${index} `);
      if (index % 10 === 9)
        emitter.emit(frame('thinking', runId, { agent: 'writer', content: `thought ${index}` }));
    }
    await emitter.close();
    // No waiting: everything the emitter published is already in the stream.
    expect(await countStored(bus, bus.names.streams.events, bus.names.events(runId))).toBe(
      emitter.framesPublished,
    );
    const frames = await storedFrames(runId);
    expect(frames).toHaveLength(emitter.framesPublished);
    expect(frames.filter((value) => value.type === 'thinking')).toHaveLength(5);
    expect(frames.at(-1)).toMatchObject({ type: 'thinking', content: 'thought 49' });
  });

  it('close() with nothing emitted resolves at once', async () => {
    const emitter = createStepEmitter(bus, identity(randomUUID()), settings);
    await emitter.close();
    expect(emitter.framesPublished).toBe(0);
  });

  it('close() rejects with the publish error when frames cannot be stored', async () => {
    // Same connection, but a namespace without streams: JetStream has no stream for the subject.
    const unstored: Bus = { ...bus, names: busNames(uniqueName('nostream')) };
    const runId = randomUUID();
    const emitter = createStepEmitter(unstored, identity(runId), settings);
    emitter.text('lost');
    await expect(emitter.close()).rejects.toThrow();
  });
});
