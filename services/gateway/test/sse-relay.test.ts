import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Bus, publishFrame, type Responder, serveRequests } from '@quill/bus';
import { frame, RunEndReply, RunEndRequest } from '@quill/contracts';
import { createProject, createSession, createUser } from '@quill/db/gateway';
import { createRun } from '@quill/db/router';
import { createTestDatabase, type TestDatabase } from '@quill/db/testing';
import type { FastifyBaseLogger } from 'fastify';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { closeTestBus, openTestBus } from '../../../test/support/test-bus.ts';
import { testUrls } from '../../../test/support/urls.ts';
import { createHeartbeats, type Heartbeats } from '../src/heartbeats.ts';
import { createRunFeeds, type RunFeeds } from '../src/run-feed.ts';
import type { RunWatch } from '../src/run-watch.ts';
import { relayRunEvents } from '../src/sse-relay.ts';

/** The relay on a plain HTTP server over a real bus; the run watch is a recorder. */
let bus: Bus;
let database: TestDatabase;
let heartbeats: Heartbeats;
/** The router's `router.runs.end`, stood in by a recorder: the row is the router's to end. */
let router: Responder;
const endRequests: RunEndRequest[] = [];
let feeds: RunFeeds;
let server: Server;
let base: string;
const detached: Array<{ runId: string; clientLeft: boolean }> = [];
const watch = ((runId: string) => ({
  detach: (clientLeft: boolean) => detached.push({ runId, clientLeft }),
})) as unknown as RunWatch;
const logger = pino({ level: 'silent' }) as unknown as FastifyBaseLogger;

beforeAll(async () => {
  bus = await openTestBus('s', 'sse-relay-test');
  database = await createTestDatabase({ serverUrl: testUrls.database });
  heartbeats = createHeartbeats(60_000);
  router = serveRequests(
    bus,
    bus.names.routerRunEnd,
    { request: RunEndRequest, reply: RunEndReply },
    {
      handle: async (request) => {
        endRequests.push(request);
        return { v: 1 as const, ok: true as const, result: 'applied' as const };
      },
      invalidReply: { v: 1, ok: false, code: 'invalid_request' },
      failureReply: { v: 1, ok: false, code: 'internal_error' },
    },
    pino({ level: 'silent' }),
  );
  feeds = createRunFeeds(bus);
  server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://relay');
    const fallback = url.searchParams.get('fallback');
    void relayRunEvents(
      bus,
      response,
      {
        runId: url.searchParams.get('run') ?? '',
        afterSeq: Number(url.searchParams.get('after') ?? 0),
        heartbeats,
        watch,
        endRequest: { timeoutMs: 2_000, deadlineMs: 4_000 },
        feeds,
        ...(fallback ? { fallbackAt: Date.now() } : {}),
      },
      logger,
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  heartbeats.close();
  await router.stop();
  await new Promise((resolve) => server.close(resolve));
  await closeTestBus(bus);
  await database.drop();
});

interface SseEvent {
  id?: number;
  type?: string;
  content?: string;
}

/** The events of an SSE body (comments and the retry line left out). */
function parse(body: string): SseEvent[] {
  return body
    .split('\n\n')
    .filter((block) => block.includes('data:'))
    .map((block) => {
      const id = /^id: (\d+)$/m.exec(block)?.[1];
      const data = JSON.parse(/^data: (.*)$/m.exec(block)![1]!) as { type: string; content?: string };
      return {
        ...(id ? { id: Number(id) } : {}),
        type: data.type,
        ...(data.content ? { content: data.content } : {}),
      };
    });
}

async function publishTexts(runId: string, contents: string[]): Promise<number[]> {
  const seqs: number[] = [];
  for (const content of contents) {
    seqs.push((await publishFrame(bus, frame('text', runId, { agent: 'writer', content }))).seq);
  }
  return seqs;
}

describe('gateway SSE relay', () => {
  it('streams a run from the start: retry first, each frame with its sequence as id, ends at done', async () => {
    const runId = randomUUID();
    const seqs = await publishTexts(runId, ['一', '二']);
    const done = (await publishFrame(bus, frame('done', runId, {}))).seq;
    const response = await fetch(`${base}/?run=${runId}`);
    expect(response.headers.get('content-type')).toContain('text/event-stream');
    const body = await response.text();
    expect(body.startsWith('retry: ')).toBe(true);
    expect(parse(body)).toEqual([
      { id: seqs[0], type: 'text', content: '一' },
      { id: seqs[1], type: 'text', content: '二' },
      { id: done, type: 'done' },
    ]);
    expect(detached).toContainEqual({ runId, clientLeft: false });
  });

  it('resumes exactly after Last-Event-ID, then follows live frames', async () => {
    const runId = randomUUID();
    const seqs = await publishTexts(runId, ['一', '二', '三']);
    const response = await fetch(`${base}/?run=${runId}&after=${seqs[0]}`);
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    let body = '';
    // Read until the stored frames are through; only then publish the live ones.
    while (parse(body).length < 2) body += decoder.decode((await reader.read()).value);
    const live = await publishTexts(runId, ['四']);
    const done = (await publishFrame(bus, frame('done', runId, {}))).seq;
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) {
      body += decoder.decode(chunk.value);
    }
    expect(parse(body).map((event) => event.id)).toEqual([seqs[1], seqs[2], live[0], done]);
  });

  it('a run nobody ends by its deadline is ended by the relay: worker_lost, done, the router asked to end the row', async () => {
    const userId = (await createUser(database.pool, { email: 'relay@example.com', displayName: 'R' })).id;
    const projectId = (await createProject(database.pool, { ownerId: userId, title: 'R' })).id;
    const { sessionId } = await createSession(database.pool, { projectId, userId, title: 'chat' });
    const runId = randomUUID();
    await createRun(database.pool, { runId, sessionId, projectId, userId, generationMode: 'fast' });
    await publishTexts(runId, ['写到一半']);
    const body = await (await fetch(`${base}/?run=${runId}&fallback=1`)).text();
    expect(parse(body).map((event) => event.type)).toEqual(['text', 'error', 'done']);
    // The request goes out after `done`: wait for it to arrive rather than for a time.
    await vi.waitFor(
      () =>
        expect(endRequests).toContainEqual(expect.objectContaining({ run_id: runId, reason: 'worker_lost' })),
      { timeout: 30_000, interval: 50 },
    );
  });
});
