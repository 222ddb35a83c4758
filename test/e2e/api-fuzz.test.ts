import { API_ROUTES, type ApiRoute, ERROR_CATALOG, ErrorResponse, errorMessage } from '@quill/contracts';
import { addProjectMember, createApiKey, createUser } from '@quill/db/gateway';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postJson } from '../support/api.ts';
import { type FuzzRequest, type FuzzWorld, requestsFor, wrongMethods } from '../support/fuzz-requests.ts';
import { type Stack, startStack } from '../support/stack.ts';

// Property-based fuzzing of every route in the route table (the one the OpenAPI document is built
// from) against a real gateway: no input may get a 5xx, and every error is the documented body.
// Billing answers reservations, so a request valid enough to start a run gets its stream.
const RUNS_PER_ROUTE = Number(process.env.QUILL_FUZZ_RUNS ?? 80);

let stack: Stack;
let world: FuzzWorld;
const statuses = new Map<number, number>();
let sent = 0;

beforeAll(async () => {
  stack = await startStack({
    // The router opens the runs a valid launch asks for (without it every such launch waits out
    // the request deadline and gets a 503); nothing downstream of it is needed.
    replicas: { context: 0, writer: 0, reviewer: 0 },
    // The limiter would answer 429 before most bodies are parsed.
    env: { GATEWAY_RATE_LIMIT_PER_MINUTE: '1000000' },
  });
  const file = await postJson(stack.gateways[0]!, `/projects/${stack.projectId}/files`, stack.apiKey, {
    title: '第一章',
    file_type: 'draft',
    content: '雨夜。',
  });
  // A run of the owner's: its id makes the run routes reach their checks.
  const started = await fetch(`${stack.gateways[0]}/api/v1/agent/stream`, {
    method: 'POST',
    headers: { authorization: `Bearer ${stack.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ project_id: stack.projectId, message: '开头' }),
  });
  expect(started.status).toBe(200);
  const runId = started.headers.get('x-quill-run-id')!;
  const sessionId = started.headers.get('x-quill-session-id')!;
  await started.body?.cancel();
  const viewer = await createUser(stack.pool, {
    email: `v-${crypto.randomUUID()}@example.com`,
    displayName: 'v',
  });
  await addProjectMember(stack.pool, stack.projectId, viewer.id, 'viewer');
  const admin = await createUser(stack.pool, {
    email: `a-${crypto.randomUUID()}@example.com`,
    displayName: 'a',
    role: 'admin',
  });
  world = {
    projectId: stack.projectId,
    fileId: file.body.file.id,
    runId,
    sessionId,
    userId: stack.userId,
    skillName: 'rain-style',
    keys: [
      stack.apiKey,
      stack.apiKey,
      (await createApiKey(stack.pool, viewer.id, 'fuzz')).key,
      (await createApiKey(stack.pool, admin.id, 'fuzz')).key,
    ],
  };
});
afterAll(async () => {
  const histogram = [...statuses.entries()]
    .sort(([a], [b]) => a - b)
    .map(([status, count]) => `${status}×${count}`);
  console.info(`api fuzz: ${sent} requests, statuses ${histogram.join(' ')}`);
  await stack?.stop();
});

/** Sends one request; throws (so fast-check shrinks it) on a 5xx or an undocumented error body. */
async function check(request: FuzzRequest): Promise<void> {
  const hasBody = request.body !== undefined && request.method !== 'GET' && request.method !== 'HEAD';
  const response = await fetch(`${stack.gateways[0]}/api/v1${request.path}`, {
    method: request.method,
    headers: request.headers,
    ...(hasBody ? { body: request.body as string | Uint8Array<ArrayBuffer> } : {}),
    redirect: 'manual',
    signal: AbortSignal.timeout(30_000),
  });
  sent++;
  // A fuzzed DELETE /projects/:projectId may soft-delete the shared project; restore it so the
  // routes fuzzed after it still get past their project check.
  if (request.method === 'DELETE')
    await stack.pool.query('UPDATE projects SET deleted_at = NULL WHERE id = $1', [world.projectId]);
  statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
  const described = `${request.method} ${request.path.slice(0, 200)} → ${response.status}`;
  if (response.headers.get('content-type')?.startsWith('text/event-stream')) {
    // A run started: its stream is not what is under test here.
    await response.body?.cancel();
    expect(response.status, described).toBe(200);
    return;
  }
  const text = await response.text();
  expect(response.status, `${described}: ${text.slice(0, 300)}`).toBeLessThan(500);
  if (response.status < 400) return;
  expect(response.headers.get('content-type'), described).toMatch(/^application\/json/);
  const body = ErrorResponse.safeParse(JSON.parse(text));
  expect(body.success, `${described}: ${text.slice(0, 300)}`).toBe(true);
  const { code, message } = body.data!.error;
  // The catalog's message for the code, in English or, when the request asked for it, Chinese
  // (docs/protocol.md, error messages in the author's language).
  const known = code as keyof typeof ERROR_CATALOG;
  expect([errorMessage(known, 'en'), errorMessage(known, 'zh')], described).toContain(message);
  expect(ERROR_CATALOG[code as keyof typeof ERROR_CATALOG].http, described).toBe(response.status);
  if (response.status === 405) expect(response.headers.get('allow'), described).toBeTruthy();
}

const label = (route: ApiRoute) => `${route.method} ${route.path}`;

describe('fuzzing every route: no 5xx, only documented errors', () => {
  it.each(API_ROUTES.map((route) => [label(route), route] as const))('%s', async (_label, route) => {
    await fc.assert(fc.asyncProperty(requestsFor(route, world), check), { numRuns: RUNS_PER_ROUTE });
  });

  it('any method on a known path', async () => {
    await fc.assert(fc.asyncProperty(wrongMethods(API_ROUTES, world), check), {
      numRuns: RUNS_PER_ROUTE * 3,
    });
  });
});
