import { createHash } from 'node:crypto';
import { FRAME_TYPES, SSE_RETRY_MS, type SseFrame, STREAM_TICKET_TTL_S } from '@quill/contracts';
import { createApiKey, createUser } from '@quill/db/gateway';
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { Redis } from 'ioredis';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postJson, slowReply } from '../support/api.ts';
import {
  bundleClient,
  hasChromium,
  launchChromium,
  servePage,
  startCuttingProxy,
} from '../support/browser.ts';
import { startRun } from '../support/sse-client.ts';
import { type Stack, startStack } from '../support/stack.ts';
import { testUrls } from '../support/urls.ts';

let stack: Stack;
let page: Awaited<ReturnType<typeof servePage>>;
let browser: Browser | undefined;
let redis: Redis;
let gateway: string;

beforeAll(async () => {
  // The page's origin must be known before the gateway starts: it is the CORS allow-list.
  page = await servePage('<!doctype html><title>quill client</title>', { '/client.js': bundleClient });
  stack = await startStack({ env: { GATEWAY_CORS_ORIGINS: page.origin } });
  gateway = stack.gateways[0]!;
  redis = new Redis(testUrls.redis);
  if (hasChromium) browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await stack?.stop();
  await page?.close();
  redis?.disconnect();
});

/** A whole SSE body as a spec-following parser reads it: events with their names, and `retry:`. */
async function readEvents(response: Response): Promise<{ events: EventSourceMessage[]; retry?: number }> {
  const events: EventSourceMessage[] = [];
  let retry: number | undefined;
  const parser = createParser({ onEvent: (event) => events.push(event), onRetry: (ms) => (retry = ms) });
  parser.feed(await response.text());
  return { events, ...(retry === undefined ? {} : { retry }) };
}

const resume = (runId: string, init: { lastEventId?: string; query?: string; bearer?: string } = {}) =>
  fetch(`${gateway}/api/v1/agent/runs/${runId}/stream${init.query ?? ''}`, {
    headers: {
      ...(init.bearer ? { authorization: `Bearer ${init.bearer}` } : {}),
      ...(init.lastEventId ? { 'last-event-id': init.lastEventId } : {}),
    },
  });

let finished: { runId: string; events: EventSourceMessage[]; protocol: string | null } | undefined;
async function finishedRun() {
  if (finished) return finished;
  const response = await startRun(gateway, stack.apiKey, {
    project_id: stack.projectId,
    message: '写一段雨夜',
  });
  expect(response.status).toBe(200);
  const runId = response.headers.get('x-quill-run-id')!;
  const { events, retry } = await readEvents(response);
  expect(retry).toBe(SSE_RETRY_MS);
  finished = { runId, events, protocol: response.headers.get('x-quill-protocol') };
  return finished;
}

describe('SSE frames for EventSource', () => {
  it('name each frame in `event:` next to its JSON, and start with `retry:`', async () => {
    const { events } = await finishedRun();
    expect(events.length).toBeGreaterThan(3);
    for (const event of events) expect(event.event).toBe((JSON.parse(event.data) as SseFrame).type);
    expect(finished!.protocol).toBe('2');
    expect(events.at(-1)!.event).toBe('done');
  });

  it('answer a resume at or after `done` with 204, and before it with the rest', async () => {
    const { runId, events } = await finishedRun();
    const doneId = Number(events.at(-1)!.id);
    for (const lastEventId of [String(doneId), String(doneId + 1000)]) {
      const response = await resume(runId, { lastEventId, bearer: stack.apiKey });
      expect(response.status, lastEventId).toBe(204);
    }
    const beforeDone = await resume(runId, { lastEventId: events.at(-2)!.id!, bearer: stack.apiKey });
    expect(beforeDone.status).toBe(200);
    expect((await readEvents(beforeDone)).events.map((event) => event.id)).toEqual([events.at(-1)!.id]);
    const byQuery = await resume(runId, { query: `?last_event_id=${doneId}`, bearer: stack.apiKey });
    expect(byQuery.status).toBe(204);
    const ahead = await resume(runId, { lastEventId: String(2 ** 40), bearer: stack.apiKey });
    expect(ahead.status).toBe(204);
    const malformed = await resume(runId, { lastEventId: '1e400', bearer: stack.apiKey });
    expect(malformed.status).toBe(400);
    expect(Object.keys(((await malformed.json()) as { error: { fields: object } }).error.fields)).toEqual([
      'last-event-id',
    ]);
  });
});

describe('resume points', () => {
  it('refuse a Last-Event-ID past anything stored while the run is still running', async () => {
    stack.fakeLlm.addScript({ match: { role: 'writer' }, responses: [slowReply(3)] });
    const response = await startRun(gateway, stack.apiKey, {
      project_id: stack.projectId,
      message: '慢慢写',
    });
    const runId = response.headers.get('x-quill-run-id')!;
    const ahead = await resume(runId, { lastEventId: String(2 ** 40), bearer: stack.apiKey });
    expect(ahead.status).toBe(400);
    expect(((await ahead.json()) as { error: { fields: object } }).error.fields).toEqual({
      'last-event-id': ['is after the newest stored frame'],
    });
    const { events } = await readEvents(response);
    expect(events.at(-1)!.event).toBe('done');
  });
});

describe('stream tickets', () => {
  const mint = (runId: string, key = stack.apiKey) =>
    postJson(gateway, `/agent/runs/${runId}/stream-ticket`, key, {});

  it('open one stream of one run, once, and expire within a minute', async () => {
    const { runId, events } = await finishedRun();
    const minted = await mint(runId);
    expect(minted.status).toBe(201);
    expect(minted.body.expires_in).toBe(STREAM_TICKET_TTL_S);
    const { ticket } = minted.body as { ticket: string };
    const stored = `${stack.redisPrefix}sse:ticket:${createHash('sha256').update(ticket).digest('hex')}`;
    const ttl = await redis.ttl(stored);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(STREAM_TICKET_TTL_S);

    const first = await resume(runId, { query: `?ticket=${ticket}&last_event_id=${events.at(-2)!.id}` });
    expect(first.status).toBe(200);
    expect((await readEvents(first)).events.map((event) => event.event)).toEqual(['done']);
    expect(await redis.exists(stored)).toBe(0);
    expect((await resume(runId, { query: `?ticket=${ticket}` })).status).toBe(401);
  });

  it('are refused for another run, without a run the caller owns, and when malformed', async () => {
    const { runId } = await finishedRun();
    const { ticket } = (await mint(runId)).body as { ticket: string };
    expect((await resume(crypto.randomUUID(), { query: `?ticket=${ticket}` })).status).toBe(401);
    // Spent by that attempt, even though it was for another run.
    expect((await resume(runId, { query: `?ticket=${ticket}` })).status).toBe(401);
    const stranger = await createUser(stack.pool, {
      email: `s-${crypto.randomUUID()}@example.com`,
      displayName: 's',
    });
    const strangerKey = (await createApiKey(stack.pool, stranger.id, 'test')).key;
    expect((await mint(runId, strangerKey)).status).toBe(404);
    expect((await resume(runId, { query: '?ticket=short' })).status).toBe(401);
    expect((await resume(runId)).status).toBe(401);
  });
});

describe('a browser page on another origin', () => {
  it('starts a run, reads x-quill-run-id, and replays it with a native EventSource and a ticket', async () => {
    expect(browser, 'headless Chromium is needed: apt-get install -y chromium').toBeDefined();
    const tab = await browser!.newPage();
    try {
      await tab.goto(page.origin);
      const seen = await tab.evaluate(
        async ({ api, apiKey, projectId, frameTypes }) => {
          const json = { 'content-type': 'application/json' };
          const token = await fetch(`${api}/auth/token`, {
            method: 'POST',
            headers: json,
            body: JSON.stringify({ api_key: apiKey }),
          }).then((response) => response.json() as Promise<Record<string, string>>);
          const bearer = { authorization: `Bearer ${token.access_token}` };
          const started = await fetch(`${api}/agent/stream`, {
            method: 'POST',
            headers: { ...json, ...bearer },
            body: JSON.stringify({ project_id: projectId, message: '写一段雨夜' }),
          });
          const runId = started.headers.get('x-quill-run-id');
          const fetched = await started.text();
          const minted = await fetch(`${api}/agent/runs/${runId}/stream-ticket`, {
            method: 'POST',
            headers: { ...json, ...bearer },
            body: '{}',
          }).then((response) => response.json() as Promise<Record<string, string>>);
          return await new Promise<{ runId: string | null; fetched: number; types: string[]; ids: string[] }>(
            (resolve, reject) => {
              const source = new EventSource(`${api}${minted.stream_url!.replace('/api/v1', '')}`);
              const types: string[] = [];
              const ids: string[] = [];
              for (const type of frameTypes) {
                source.addEventListener(type, (event) => {
                  types.push(type);
                  ids.push((event as MessageEvent).lastEventId);
                  if (type === 'done') {
                    source.close();
                    resolve({ runId, fetched: fetched.length, types, ids });
                  }
                });
              }
              source.onerror = () => {
                source.close();
                reject(new Error(`EventSource failed after ${types.join(',')}`));
              };
            },
          );
        },
        {
          api: `${gateway}/api/v1`,
          apiKey: stack.apiKey,
          projectId: stack.projectId,
          frameTypes: FRAME_TYPES,
        },
      );
      expect(seen.runId).toMatch(/^[0-9a-f-]{36}$/);
      expect(seen.fetched).toBeGreaterThan(0);
      expect(seen.types[0]).toBe('run_started');
      expect(seen.types.at(-1)).toBe('done');
      expect(seen.types).toContain('workflow_complete');
      expect(seen.ids.every((id) => /^\d+$/.test(id))).toBe(true);
    } finally {
      await tab.close();
    }
  });

  it('resumes through @quill/client openRunEventSource with a fresh ticket after the connection drops', async () => {
    expect(browser, 'headless Chromium is needed: apt-get install -y chromium').toBeDefined();
    // The EventSource goes through a proxy that cuts its first connection a few frames in.
    const proxy = await startCuttingProxy(gateway, 1200);
    const tab = await browser!.newPage();
    try {
      stack.fakeLlm.addScript({ match: { role: 'writer' }, responses: [slowReply(2)] });
      await tab.goto(page.origin);
      const seen = await tab.evaluate(
        async ({ api, streamBase, apiKey, projectId }) => {
          // Built by new Function so the test runner's transform leaves this import() alone.
          const load = new Function('url', 'return import(url)') as (
            url: string,
          ) => Promise<typeof import('@quill/client')>;
          const { createQuillClient, openRunEventSource } = await load('/client.js');
          const client = createQuillClient({ baseUrl: api, token: apiKey });
          const run = await client.agent.stream({ project_id: projectId, message: '写一段雨夜' });
          const frames: Array<[number, string]> = [];
          let tickets = 0;
          const source = openRunEventSource({
            client: {
              agent: {
                streamTicket: (runId: string) => {
                  tickets++;
                  return client.agent.streamTicket(runId);
                },
              },
            },
            baseUrl: streamBase,
            runId: run.runId,
            onFrame: (streamed) => frames.push([streamed.id, streamed.frame.type]),
          });
          await source.finished;
          return { runId: run.runId, frames, tickets };
        },
        { api: gateway, streamBase: proxy.url, apiKey: stack.apiKey, projectId: stack.projectId },
      );
      // The first connection was cut, the browser's own reconnect was refused (spent ticket), and
      // a new EventSource with a new ticket carried on after the last id.
      expect(proxy.connections()).toBeGreaterThanOrEqual(2);
      expect(seen.tickets).toBeGreaterThanOrEqual(2);
      const whole = await readEvents(await resume(seen.runId, { bearer: stack.apiKey }));
      expect(seen.frames.map(([id, type]) => `${id} ${type}`)).toEqual(
        whole.events.map((event) => `${event.id} ${event.event}`),
      );
      expect(seen.frames.at(-1)![1]).toBe('done');
    } finally {
      await tab.close();
      await proxy.close();
    }
  });
});
