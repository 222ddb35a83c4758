import { ERROR_CATALOG, ERROR_MESSAGES_ZH, ErrorResponse } from '@quill/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Stack, startStack } from '../support/stack.ts';

// Only the gateway: error bodies and the body limit are answered before any run starts.
const BODY_LIMIT = 4096;
let stack: Stack;
let base: string;
beforeAll(async () => {
  stack = await startStack({
    replicas: { context: 0, billing: 0, router: 0, writer: 0, reviewer: 0 },
    env: { GATEWAY_BODY_LIMIT_BYTES: String(BODY_LIMIT) },
  });
  base = stack.gateways[0]!;
});
afterAll(async () => {
  await stack?.stop();
});

async function call(method: string, path: string, headers: Record<string, string> = {}, body?: string) {
  const response = await fetch(`${base}/api/v1${path}`, {
    method,
    headers: { authorization: `Bearer ${stack.apiKey}`, ...headers },
    ...(body === undefined ? {} : { body }),
  });
  return { status: response.status, error: ErrorResponse.parse(await response.json()).error };
}

describe('error messages follow the requester language (docs/protocol.md)', () => {
  it('answers in Chinese for a zh accept-language, in English otherwise, with the same code', async () => {
    const path = '/no-such-route';
    const zh = await call('GET', path, { 'accept-language': 'zh-CN,zh;q=0.9,en;q=0.8' });
    const en = await call('GET', path, { 'accept-language': 'en-GB,en;q=0.9' });
    const none = await call('GET', path);
    for (const answer of [zh, en, none])
      expect(answer).toMatchObject({ status: 404, error: { code: 'not_found' } });
    expect(zh.error.message).toBe(ERROR_MESSAGES_ZH.not_found);
    expect(en.error.message).toBe(ERROR_CATALOG.not_found.message);
    expect(none.error.message).toBe(ERROR_CATALOG.not_found.message);
    // Weights decide, not order.
    const weighted = await call('GET', path, { 'accept-language': 'en;q=0.4, zh;q=0.8' });
    expect(weighted.error.message).toBe(ERROR_MESSAGES_ZH.not_found);
  });

  it('a run request stating ui_language gets its 400 in that language, whatever the header says', async () => {
    const json = { 'content-type': 'application/json', 'accept-language': 'en' };
    const body = JSON.stringify({ project_id: stack.projectId, ui_language: 'zh', message: 42 });
    const zh = await call('POST', '/agent/stream', json, body);
    expect(zh.status).toBe(400);
    expect(zh.error.code).toBe('invalid_request');
    expect(zh.error.message).toBe(ERROR_MESSAGES_ZH.invalid_request);
    expect(Object.keys(zh.error.fields ?? {})).toContain('message');
  });
});

describe('the request body limit (GATEWAY_BODY_LIMIT_BYTES)', () => {
  // /agent/stop answers a parsed body with its own 4xx; only the size decides 413.
  const json = { 'content-type': 'application/json' };
  const bodyOf = (bytes: number) => {
    const shell = JSON.stringify({ session_id: '' });
    return JSON.stringify({ session_id: 'x'.repeat(bytes - shell.length) });
  };

  it('accepts a body of exactly the limit and refuses one byte more with a documented 413', async () => {
    expect(Buffer.byteLength(bodyOf(BODY_LIMIT))).toBe(BODY_LIMIT);
    const atLimit = await call('POST', '/agent/stop', json, bodyOf(BODY_LIMIT));
    expect(atLimit.status).not.toBe(413);
    expect(atLimit.status).toBeLessThan(500);
    const over = await call('POST', '/agent/stop', json, bodyOf(BODY_LIMIT + 1));
    expect(over.status).toBe(413);
    expect(over.error.code).toBe('payload_too_large');
    expect(over.error.message).toBe(ERROR_CATALOG.payload_too_large.message);
    const overZh = await call(
      'POST',
      '/agent/stop',
      { ...json, 'accept-language': 'zh' },
      bodyOf(BODY_LIMIT + 1),
    );
    expect(overZh.error).toMatchObject({
      code: 'payload_too_large',
      message: ERROR_MESSAGES_ZH.payload_too_large,
    });
  });
});
