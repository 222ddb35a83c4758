/**
 * The writer's frame emitter alone, on a virtual clock: how long each token waits in it for the
 * newest token of its frame (what coalescing adds to a token's delay) and how many frames it
 * sends per 1,000 tokens, by token rate, window and arrival pattern. No services and no machine
 * load in the figures: `steady` deltas arrive at the model's pace, `bunched` ones as a busy
 * writer reads them (one read in ten comes 0–100 ms late, with every token emitted meanwhile).
 * The transport is a stub that stores nothing (the frames are counted as the emitter sends them).
 * Pass `--emitter` to replay another version of the emitter module (e.g. an older one copied
 * next to it) on the same deltas. Prints a table and one JSON line.
 *
 *   node test/load/emitter-replay.ts [--rates 20,33,50,100] [--windows 40,60,100] [--streams 50]
 *                                    [--seconds 20] [--emitter ../../libs/agent-runtime/src/frame-emitter.ts]
 */
import { parseArgs } from 'node:util';
import type { Bus } from '@quill/bus';
import { busNames } from '@quill/contracts';
import { distribution, rounded, table } from './support/stats.ts';

const { values } = parseArgs({
  options: {
    rates: { type: 'string', default: '20,33,50,100' },
    windows: { type: 'string', default: '40,60,100' },
    streams: { type: 'string', default: '50' },
    seconds: { type: 'string', default: '20' },
    emitter: { type: 'string', default: '../../libs/agent-runtime/src/frame-emitter.ts' },
  },
});

// The virtual clock: the emitter reads performance.now() and sets timers; both are replaced
// before it is loaded, and the replay advances time from one event to the next.
let now = 0;
const timers = new Map<number, { at: number; run: () => void }>();
let nextTimer = 1;
Object.defineProperty(performance, 'now', { value: () => now, configurable: true });
globalThis.setTimeout = ((run: () => void, ms = 0) => {
  const id = nextTimer++;
  timers.set(id, { at: now + Math.max(0, ms), run });
  return id;
}) as unknown as typeof setTimeout;
globalThis.clearTimeout = ((id: number | undefined) => {
  if (id !== undefined) timers.delete(id);
}) as unknown as typeof clearTimeout;
// The end of the turn: after every delta of the same instant (one socket read).
globalThis.setImmediate = ((run: () => void) => setTimeout(run, 0.001)) as unknown as typeof setImmediate;
globalThis.clearImmediate = clearTimeout as unknown as typeof clearImmediate;

const { createStepEmitter } = (await import(
  values.emitter
)) as typeof import('../../libs/agent-runtime/src/frame-emitter.ts');

/** A bus whose publishes are acknowledged at once and stored nowhere. */
const stubBus = {
  names: busNames('replay'),
  connection: { isClosed: () => false },
  publishRetry: { deadlineMs: 1000 },
  state: {
    ackedPublisher: () => ({
      publish: async () => ({ stream: 'replay', seq: 1, duplicate: false }),
      pending: 0,
    }),
    batches: { queue: [], inFlight: 0, scheduled: false, timer: undefined },
  },
} as unknown as Bus;

/** A small deterministic generator, so both emitters see the same deltas. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2_147_483_648;
    return state / 2_147_483_648;
  };
}

/** When each delta reaches the emitter, per stream. */
function arrivals(rate: number, pattern: string, streams: number, seconds: number): number[][] {
  const next = random(rate * 7919 + pattern.length);
  return Array.from({ length: streams }, () => {
    const start = next() * 1000;
    const times: number[] = [];
    let readAt = 0;
    for (let token = 0; token < rate * seconds; token++) {
      const emitted = start + (token * 1000) / rate;
      if (pattern === 'bunched') {
        // A late read takes every token emitted until it happens.
        if (emitted >= readAt) readAt = emitted + (next() < 0.1 ? next() * 100 : next() * 2);
        times.push(readAt);
      } else times.push(emitted + next() * 2);
    }
    return times;
  });
}

function replay(rate: number, windowMs: number, pattern: string) {
  const streams = arrivals(rate, pattern, Number(values.streams), Number(values.seconds));
  const events: Array<{ at: number; stream: number }> = [];
  streams.forEach((times, stream) => {
    for (const at of times) events.push({ at, stream });
  });
  events.sort((a, b) => a.at - b.at);
  now = 0;
  timers.clear();
  const window = { ms: windowMs };
  const emitters = streams.map((_, stream) =>
    createStepEmitter(
      stubBus,
      { runId: `replay-${stream}`, step: 0, attempt: 0, agent: 'writer' },
      {
        flushMs: windowMs,
        flushBytes: 512,
        flushWindow: window,
      },
    ),
  );
  const unsent: number[][] = streams.map(() => []);
  const sent = streams.map(() => 0);
  const held: number[] = [];
  const settle = (stream: number) => {
    const frames = emitters[stream]!.framesPublished;
    if (frames === sent[stream]) return;
    sent[stream] = frames;
    for (const at of unsent[stream]!) held.push(now - at);
    unsent[stream] = [];
  };
  const runTimersUntil = (until: number) => {
    for (;;) {
      let first: [number, { at: number; run: () => void }] | undefined;
      for (const entry of timers) if (!first || entry[1].at < first[1].at) first = entry;
      if (!first || first[1].at > until) return;
      timers.delete(first[0]);
      now = first[1].at;
      first[1].run();
      for (let stream = 0; stream < emitters.length; stream++) settle(stream);
    }
  };
  for (const event of events) {
    runTimersUntil(event.at);
    now = event.at;
    unsent[event.stream]!.push(now);
    emitters[event.stream]!.text('雨');
    settle(event.stream);
  }
  runTimersUntil(Number.POSITIVE_INFINITY);
  const frames = sent.reduce((total, count) => total + count, 0);
  return {
    tokens_per_second: rate,
    window_ms: windowMs,
    pattern,
    held_ms: distribution(held),
    frames_per_1k_tokens: (frames * 1000) / events.length,
    still_pending: unsent.reduce((total, list) => total + list.length, 0),
  };
}

const figures = [];
for (const pattern of ['steady', 'bunched']) {
  for (const windowMs of values.windows.split(',').map(Number)) {
    for (const rate of values.rates.split(',').map(Number)) figures.push(replay(rate, windowMs, pattern));
  }
}
console.log(
  `emitter replay (${values.emitter}): ${values.streams} streams × ${values.seconds} s per cell, virtual clock`,
);
console.log(
  table([
    ['pattern', 'window', 'tokens/s', 'held p50/p99/max', 'frames/1k tok'],
    ...figures.map((f) => [
      f.pattern,
      f.window_ms,
      f.tokens_per_second,
      `${f.held_ms.p50.toFixed(1)} / ${f.held_ms.p99.toFixed(1)} / ${f.held_ms.max.toFixed(1)}`,
      f.frames_per_1k_tokens,
    ]),
  ]),
);
console.log(JSON.stringify(rounded({ bench: 'emitter-replay', emitter: values.emitter, cells: figures })));
