import { ERROR_CATALOG, ErrorResponse, INT4_MAX } from '@quill/contracts';
import { addProjectMember, createApiKey, createUser } from '@quill/db/gateway';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postJson } from '../support/api.ts';
import { rawRequest, slowUpload } from '../support/raw-http.ts';
import { type Stack, startStack } from '../support/stack.ts';

// Only the gateway is needed: these requests are refused (or answered) before any run starts.
const APP_ORIGIN = 'http://app.quill.test:5173';
let stack: Stack;
let base: string;
beforeAll(async () => {
  stack = await startStack({
    replicas: { context: 0, billing: 0, router: 0, writer: 0, reviewer: 0 },
    env: { GATEWAY_CORS_ORIGINS: `${APP_ORIGIN},https://other.quill.test` },
  });
  base = stack.gateways[0]!;
});
afterAll(async () => {
  await stack?.stop();
});

function expectDocumentedError(body: unknown, code: keyof typeof ERROR_CATALOG) {
  const parsed = ErrorResponse.parse(typeof body === 'string' ? JSON.parse(body) : body);
  expect(parsed.error.code).toBe(code);
  expect(parsed.error.message).toBe(ERROR_CATALOG[code].message);
  return parsed;
}

const call = (method: string, path: string, init: { body?: string; headers?: Record<string, string> } = {}) =>
  fetch(`${base}/api/v1${path}`, {
    method,
    headers: { authorization: `Bearer ${stack.apiKey}`, ...init.headers },
    ...(init.body === undefined ? {} : { body: init.body }),
  });

describe('malformed input is a documented 4xx, never a 5xx', () => {
  it.each(['constructor', 'toString', 'valueOf', 'hasOwnProperty', '__defineGetter__'])(
    'names an unknown body key %s as a field',
    async (key) => {
      const response = await postJson(base, '/agent/suggest', stack.apiKey, {
        project_id: stack.projectId,
        [key]: 1,
      });
      expect(response.status).toBe(400);
      expect(Object.keys(expectDocumentedError(response.body, 'invalid_request').error.fields!)).toEqual([
        key,
      ]);
    },
  );

  it('refuses NUL and unpaired surrogates in text fields with 400 naming the field', async () => {
    const files = `/projects/${stack.projectId}/files`;
    for (const title of ['a\u0000b', 'a\ud800b', '\udc00']) {
      const response = await postJson(base, files, stack.apiKey, { title, file_type: 'note' });
      expect(response.status, JSON.stringify(title)).toBe(400);
      expect(Object.keys(expectDocumentedError(response.body, 'invalid_request').error.fields!)).toEqual([
        'title',
      ]);
    }
    const content = await postJson(base, files, stack.apiKey, {
      title: 'ok',
      file_type: 'note',
      content: '\u0000',
    });
    expect(content.status).toBe(400);
    const stream = await postJson(base, '/agent/stream', stack.apiKey, {
      project_id: stack.projectId,
      message: 'write\u0000',
    });
    expect(Object.keys(expectDocumentedError(stream.body, 'invalid_request').error.fields!)).toEqual([
      'message',
    ]);
    // A pair is fine: 😀 is two UTF-16 units.
    expect((await postJson(base, files, stack.apiKey, { title: '雨😀', file_type: 'note' })).status).toBe(
      201,
    );
  });

  it('range-checks integers to their int4 columns', async () => {
    const files = `/projects/${stack.projectId}/files`;
    const created = await postJson(base, files, stack.apiKey, {
      title: 'v',
      file_type: 'note',
      content: 'x',
    });
    const path = `${files}/${created.body.file.id}`;
    for (const expected of [INT4_MAX + 1, 2 ** 53, 1e300]) {
      const response = await call('PUT', path, {
        body: JSON.stringify({ content: 'y', expected_version: expected }),
        headers: { 'content-type': 'application/json' },
      });
      expect(response.status, String(expected)).toBe(400);
    }
    const atMax = await call('PUT', path, {
      body: JSON.stringify({ content: 'y', expected_version: INT4_MAX }),
      headers: { 'content-type': 'application/json' },
    });
    expect(atMax.status).toBe(409);
    const revert = await postJson(base, `${path}/revert`, stack.apiKey, { version: INT4_MAX + 1 });
    expect(revert.status).toBe(400);
  });

  it('answers framework errors in the documented body without echoing the input', async () => {
    const marker = 'zz-marker-zz';
    const cases: Array<[string, string, keyof typeof ERROR_CATALOG, number]> = [
      [
        'over-long path segment',
        `GET /api/v1/skills/${marker}${'a'.repeat(300)}/export HTTP/1.1`,
        'uri_too_long',
        414,
      ],
      ['bad percent-encoding', `GET /api/v1/skills/${marker}%zz/export HTTP/1.1`, 'invalid_request', 400],
      ['truncated percent-encoding', `GET /api/v1/${marker}%E0%A4%A HTTP/1.1`, 'invalid_request', 400],
      [
        'over-long header block',
        `GET /api/v1/health HTTP/1.1\r\nx-${marker}: ${'a'.repeat(70_000)}`,
        'headers_too_large',
        431,
      ],
    ];
    for (const [name, head, code, status] of cases) {
      const response = await rawRequest(base, head);
      expect(response.status, name).toBe(status);
      expect(response.body, name).not.toContain(marker);
      expectDocumentedError(response.body, code);
    }
    const json = { 'content-type': 'application/json' };
    const bodies: Array<[string, RequestInit['body'], Record<string, string>, keyof typeof ERROR_CATALOG]> = [
      ['malformed JSON', `{"${marker}": `, json, 'invalid_request'],
      ['prototype poisoning', `{"__proto__": {"${marker}": 1}}`, json, 'invalid_request'],
      ['empty JSON', '', json, 'invalid_request'],
      ['text/plain', marker, { 'content-type': 'text/plain' }, 'unsupported_media_type'],
      ['xml', `<${marker}/>`, { 'content-type': 'application/xml' }, 'unsupported_media_type'],
      ['too large', JSON.stringify({ message: marker.repeat(200_000) }), json, 'payload_too_large'],
    ];
    for (const [name, body, headers, code] of bodies) {
      const response = await call('POST', '/agent/stop', { body: body as string, headers });
      const text = await response.text();
      expect(response.status, name).toBe(ERROR_CATALOG[code].http);
      expect(text, name).not.toContain(marker);
      expectDocumentedError(text, code);
    }
  });

  it('lets a client still sending a refused body finish it, then answers (a 413 is read, not a reset)', async () => {
    // 3 MiB against the 1 MiB limit: refused from content-length before any of it is read.
    const tooLarge = await slowUpload(
      base,
      `POST /api/v1/agent/stop HTTP/1.1\r\nauthorization: Bearer ${stack.apiKey}\r\ncontent-type: application/json`,
      3 * 1024 * 1024,
    );
    expect(tooLarge.sentBytes).toBe(3 * 1024 * 1024);
    expect(tooLarge.socketError).toBeUndefined();
    expect(tooLarge.status).toBe(413);
    expectDocumentedError(tooLarge.body, 'payload_too_large');
    // Refused by its content type, before any parser reads it.
    const unsupported = await slowUpload(
      base,
      `POST /api/v1/agent/stop HTTP/1.1\r\nauthorization: Bearer ${stack.apiKey}\r\ncontent-type: application/xml`,
      512 * 1024,
    );
    expect(unsupported.sentBytes).toBe(512 * 1024);
    expect(unsupported.socketError).toBeUndefined();
    expect(unsupported.status).toBe(415);
    expectDocumentedError(unsupported.body, 'unsupported_media_type');
  });

  it('answers a wrong method on a known path with 405 and allow, an unknown path with 404', async () => {
    const wrong = await call('DELETE', '/agent/stream');
    expect(wrong.status).toBe(405);
    expect(wrong.headers.get('allow')).toBe('POST');
    expectDocumentedError(await wrong.json(), 'method_not_allowed');
    const file = await call('PATCH', `/projects/${stack.projectId}/files/${crypto.randomUUID()}`);
    expect(file.status).toBe(405);
    expect(file.headers.get('allow')).toBe('DELETE, GET, HEAD, PUT');
    const unknown = await call('GET', '/agent/nowhere');
    expect(unknown.status).toBe(404);
    expectDocumentedError(await unknown.json(), 'not_found');
    const custom = await rawRequest(base, 'PROPFIND /api/v1/quota HTTP/1.1');
    expect(custom.status).toBe(405);
  });
});

describe('CORS', () => {
  it('answers a preflight from an allowed origin and exposes the x-quill headers', async () => {
    const preflight = await fetch(`${base}/api/v1/agent/stream`, {
      method: 'OPTIONS',
      headers: {
        origin: APP_ORIGIN,
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'authorization, content-type',
      },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe(APP_ORIGIN);
    expect(preflight.headers.get('access-control-allow-methods')).toContain('POST');
    expect(preflight.headers.get('access-control-allow-headers')).toContain('authorization');
    const actual = await call('GET', '/quota', { headers: { origin: APP_ORIGIN } });
    expect(actual.headers.get('access-control-allow-origin')).toBe(APP_ORIGIN);
    expect(actual.headers.get('access-control-expose-headers')).toContain('x-quill-run-id');
    expect(actual.headers.get('access-control-expose-headers')).toContain('x-quill-trace-id');
  });

  it('gives an origin outside the allow-list no access-control headers', async () => {
    const preflight = await fetch(`${base}/api/v1/agent/stream`, {
      method: 'OPTIONS',
      headers: { origin: 'https://evil.test', 'access-control-request-method': 'POST' },
    });
    expect(preflight.headers.get('access-control-allow-origin')).toBeNull();
    const actual = await call('GET', '/quota', { headers: { origin: 'https://evil.test' } });
    expect(actual.status).toBe(200);
    expect(actual.headers.get('access-control-allow-origin')).toBeNull();
  });
});

describe('project viewers', () => {
  it('cannot trigger a model call: /agent/suggest is 403 as a run is, and the model is not asked', async () => {
    const viewer = await createUser(stack.pool, {
      email: `viewer-${crypto.randomUUID()}@example.com`,
      displayName: 'v',
    });
    await addProjectMember(stack.pool, stack.projectId, viewer.id, 'viewer');
    const key = (await createApiKey(stack.pool, viewer.id, 'test')).key;
    stack.fakeLlm.clearRequests();
    const suggest = await postJson(base, '/agent/suggest', key, { project_id: stack.projectId });
    expect(suggest.status).toBe(403);
    expectDocumentedError(suggest.body, 'forbidden');
    const run = await postJson(base, '/agent/stream', key, {
      project_id: stack.projectId,
      message: '写一章',
    });
    expect(run.status).toBe(403);
    expect(stack.fakeLlm.requests()).toEqual([]);
    // The owner still gets suggestions: the 403 is the role, not the route.
    expect(
      (await postJson(base, '/agent/suggest', stack.apiKey, { project_id: stack.projectId })).status,
    ).toBe(200);
  });
});
