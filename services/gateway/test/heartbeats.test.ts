import { once } from 'node:events';
import { createServer, get, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHeartbeats, type Heartbeats } from '../src/heartbeats.ts';

const INTERVAL_MS = 200;
let heartbeats: Heartbeats;
const responses: ServerResponse[] = [];
const server = createServer((_request, response) => {
  response.writeHead(200, { 'content-type': 'text/event-stream' });
  response.flushHeaders();
  responses.push(response);
});

beforeAll(async () => {
  heartbeats = createHeartbeats(INTERVAL_MS);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
});

afterAll(async () => {
  heartbeats.close();
  server.closeAllConnections();
  server.close();
});

/**
 * Opens `count` streams and records when each heartbeat arrived on each; `markers[i]` counts the
 * `: marker` comments stream i received (what the server wrote before one has arrived before it).
 */
async function openStreams(count: number): Promise<{ beats: number[][]; markers: number[]; close(): void }> {
  const { port } = server.address() as AddressInfo;
  const beats: number[][] = [];
  const markers: number[] = [];
  const messages: IncomingMessage[] = [];
  for (let index = 0; index < count; index++) {
    const arrivals: number[] = [];
    beats.push(arrivals);
    markers.push(0);
    const message = await new Promise<IncomingMessage>((resolve) =>
      get(`http://127.0.0.1:${port}/`, resolve),
    );
    message.setEncoding('utf8');
    message.on('data', (text: string) => {
      for (const _ of text.matchAll(/: heartbeat\n\n/g)) arrivals.push(performance.now());
      for (const _ of text.matchAll(/: marker\n\n/g)) markers[index]! += 1;
    });
    messages.push(message);
  }
  return {
    beats,
    markers,
    close: () => {
      for (const message of messages) message.destroy();
    },
  };
}

describe('createHeartbeats', () => {
  it('beats on every open stream about once per interval, from one timer, and stops when removed', async () => {
    const streams = await openStreams(12);
    const stops = responses.map((response) => heartbeats.add(response));
    const started = performance.now();
    await new Promise((resolve) => setTimeout(resolve, INTERVAL_MS * 5 + 50));
    // However late a busy machine ran the wait, at most one beat per interval it took (and the
    // first within one interval of joining); a starved timer may skip ticks, never add them.
    const intervals = Math.floor((performance.now() - started) / INTERVAL_MS);
    for (const arrivals of streams.beats) {
      expect(arrivals.length).toBeGreaterThanOrEqual(2);
      expect(arrivals.length).toBeLessThanOrEqual(intervals + 1);
    }
    // Streams are spread over slices: they do not all beat in the same tick.
    const firstBeats = new Set(streams.beats.map((arrivals) => Math.round(arrivals[0]! / 10)));
    expect(firstBeats.size).toBeGreaterThan(3);

    for (const stop of stops) stop();
    // A beat written just before the stop may still be on its way: once a marker written after
    // the stop has arrived on every stream, nothing written before it is still in transit.
    for (const response of responses) response.write(': marker\n\n');
    await expect.poll(() => streams.markers.every((count) => count === 1)).toBe(true);
    const counts = streams.beats.map((arrivals) => arrivals.length);
    await new Promise((resolve) => setTimeout(resolve, INTERVAL_MS * 2));
    expect(streams.beats.map((arrivals) => arrivals.length)).toEqual(counts);
    streams.close();
  });
});
