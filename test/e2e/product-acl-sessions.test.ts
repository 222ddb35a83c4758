import { afterAll, beforeAll, describe, it } from 'vitest';
import {
  all,
  type Case,
  caseLabel,
  expectCase,
  expectPartCovered,
  newPeople,
  ownItem,
  type People,
} from '../support/acl-world.ts';
import { type Stack, startStack } from '../support/stack.ts';

/**
 * The ACL of every route outside `/projects` (sessions, runs, branches, account, admin) (README "HTTP API"): what an owner, an editor, a viewer and a stranger get, each request
 * against a fresh project (test/support/acl-world.ts).
 */
let stack: Stack;
let people: People;

beforeAll(async () => {
  stack = await startStack({
    replicas: { context: 0, billing: 0, router: 0, writer: 0, reviewer: 0 },
    env: { GATEWAY_RATE_LIMIT_PER_MINUTE: '1000000' },
  });
  people = await newPeople(stack);
});
afterAll(async () => {
  await stack?.stop();
});

const CASES: Case[] = [
  {
    route: 'GET /agent/runs/:runId/artifacts',
    request: (w) => ({ path: `/agent/runs/${w.runId}/artifacts` }),
    expect: ownItem(200),
  },
  {
    route: 'GET /sessions/:sessionId/definitions',
    request: (w) => ({ path: `/sessions/${w.sessionId}/definitions` }),
    expect: ownItem(200),
  },
  {
    route: 'POST /sessions/:sessionId/definitions/upgrade',
    request: (w) => ({ path: `/sessions/${w.sessionId}/definitions/upgrade` }),
    expect: ownItem(200),
  },
  {
    route: 'GET /sessions/:sessionId',
    request: (w) => ({ path: `/sessions/${w.sessionId}` }),
    expect: ownItem(200),
  },
  {
    route: 'PATCH /sessions/:sessionId',
    request: (w) => ({ path: `/sessions/${w.sessionId}`, body: { title: '改名' } }),
    expect: ownItem(200),
  },
  {
    route: 'DELETE /sessions/:sessionId',
    request: (w) => ({ path: `/sessions/${w.sessionId}` }),
    expect: ownItem(204),
  },
  {
    route: 'GET /sessions/:sessionId/messages',
    request: (w) => ({ path: `/sessions/${w.sessionId}/messages` }),
    expect: ownItem(200),
  },
  {
    route: 'GET /sessions/:sessionId/runs',
    request: (w) => ({ path: `/sessions/${w.sessionId}/runs` }),
    expect: ownItem(200),
  },
  {
    route: 'GET /agent/runs/:runId',
    request: (w) => ({ path: `/agent/runs/${w.runId}` }),
    expect: ownItem(200),
  },
  {
    route: 'GET /agent/runs/:runId/events',
    request: (w) => ({ path: `/agent/runs/${w.runId}/events` }),
    expect: ownItem(200),
  },
  {
    route: 'GET /agent/runs/:runId/context-trace',
    request: (w) => ({ path: `/agent/runs/${w.runId}/context-trace` }),
    expect: ownItem(200),
  },
  {
    route: 'POST /agent/runs/:runId/undo',
    request: (w) => ({ path: `/agent/runs/${w.runId}/undo`, body: {} }),
    expect: ownItem(200),
  },
  {
    route: 'GET /sessions/:sessionId/branches',
    request: (w) => ({ path: `/sessions/${w.sessionId}/branches` }),
    expect: ownItem(200),
  },
  {
    route: 'POST /sessions/:sessionId/branches',
    request: (w) => ({ path: `/sessions/${w.sessionId}/branches`, body: {} }),
    expect: ownItem(201),
  },
  {
    route: 'POST /sessions/:sessionId/branches/:branchId/activate',
    request: (w) => ({ path: `/sessions/${w.sessionId}/branches/${w.branchId}/activate`, body: {} }),
    expect: ownItem(200),
  },
  { route: 'GET /me', request: () => ({ path: '/me' }), expect: all(200) },
  { route: 'GET /me/api-keys', request: () => ({ path: '/me/api-keys' }), expect: all(200) },
  {
    route: 'POST /me/api-keys',
    request: () => ({ path: '/me/api-keys', body: { name: 'k' } }),
    expect: all(201),
  },
  {
    route: 'DELETE /me/api-keys/:keyId',
    request: (w) => ({ path: `/me/api-keys/${w.ownerKeyId}` }),
    expect: ownItem(204),
  },
  {
    route: 'POST /admin/users',
    request: () => ({
      path: '/admin/users',
      body: { email: `u-${crypto.randomUUID()}@example.com`, display_name: 'u' },
    }),
    expect: all(403),
  },
  {
    route: 'POST /admin/users/:userId/credits',
    request: (w) => ({ path: `/admin/users/${w.newcomerId}/credits`, body: { credits: 5 } }),
    expect: all(403),
  },
  { route: 'GET /usage/today', request: () => ({ path: '/usage/today' }), expect: all(200) },
  { route: 'GET /quota', request: () => ({ path: '/quota' }), expect: all(200) },
  { route: 'GET /skills', request: () => ({ path: '/skills' }), expect: all(200) },
];

describe('ACL: every other route × owner / editor / viewer / stranger', () => {
  it('covers every route of the route table outside /projects', () => {
    expectPartCovered('others', CASES);
  });

  it.each(CASES.map(caseLabel))('%s', async (_label, entry) => {
    await expectCase(stack, people, entry);
  });
});
