import { createQuillClient, QuillApiError, type StreamedFrame } from '@quill/client';
import { API_ROUTES, isTerminalFrame } from '@quill/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { slowReply } from '../support/api.ts';
import { type Stack, startStack } from '../support/stack.ts';

let stack: Stack;
beforeAll(async () => {
  stack = await startStack();
});
afterAll(async () => {
  await stack?.stop();
});

/**
 * A fetch whose first run stream breaks after a few chunks, as a flaky network would; it records
 * every request so the test can see the client resume.
 */
function flakyFetch(breakAfterChunks: number) {
  const requests: Array<{ method: string; url: string; lastEventId: string | null }> = [];
  let broken = false;
  const wrapped: typeof fetch = async (input, init) => {
    const headers = new Headers(init?.headers);
    requests.push({
      method: init?.method ?? 'GET',
      url: String(input),
      lastEventId: headers.get('last-event-id'),
    });
    const response = await fetch(input, init);
    if (broken || !response.headers.get('content-type')?.startsWith('text/event-stream')) return response;
    broken = true;
    let chunks = 0;
    const cut = new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        if (++chunks > breakAfterChunks) controller.error(new TypeError('network connection lost'));
        else controller.enqueue(chunk);
      },
    });
    return new Response(response.body!.pipeThrough(cut), {
      status: response.status,
      headers: response.headers,
    });
  };
  return { fetch: wrapped, requests };
}

async function collect(frames: AsyncIterable<StreamedFrame>): Promise<StreamedFrame[]> {
  const out: StreamedFrame[] = [];
  for await (const streamed of frames) out.push(streamed);
  return out;
}

describe('@quill/client', () => {
  it('exchanges a key for a token and calls typed JSON routes; refusals carry the catalog code', async () => {
    const anonymous = createQuillClient({ baseUrl: stack.gateways[0]! });
    const { access_token: token } = await anonymous.auth.token(stack.apiKey);
    const client = createQuillClient({ baseUrl: stack.gateways[0]!, token: () => token });
    expect((await client.quota()).credits).toBeGreaterThan(0);
    const created = await client.files.create(stack.projectId, {
      title: '设定',
      file_type: 'setting',
      content: '江南',
    });
    expect(created.file.version).toBe(1);
    const refused = await client.files
      .save(stack.projectId, created.file.id, { content: 'x', expected_version: 7 })
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(QuillApiError);
    expect(refused).toMatchObject({ status: 409, code: 'version_conflict', retryable: false });
    const invalid = await client.files
      .create(stack.projectId, { title: '', file_type: 'x' })
      .catch((error: unknown) => error);
    expect(invalid).toMatchObject({
      status: 400,
      code: 'invalid_request',
      fields: { title: [expect.any(String)] },
    });
    expect(Object.keys((await client.openApi()).paths)).toHaveLength(
      new Set(API_ROUTES.map((route) => route.path)).size,
    );
  });

  it('streams a run and resumes it after a dropped connection: every frame once, in order, to done', async () => {
    stack.fakeLlm.addScript({ match: { role: 'writer' }, responses: [slowReply(2)] });
    const flaky = flakyFetch(3);
    const client = createQuillClient({
      baseUrl: stack.gateways[0]!,
      token: stack.apiKey,
      fetch: flaky.fetch,
    });
    const run = await client.agent.stream({ project_id: stack.projectId, message: '写一段雨夜的开头' });
    expect(run.runId).toMatch(/^[0-9a-f-]{36}$/);
    const frames = await collect(run);

    const resumes = flaky.requests.filter((request) =>
      request.url.endsWith(`/agent/runs/${run.runId}/stream`),
    );
    expect(resumes.length).toBeGreaterThanOrEqual(1);
    expect(Number(resumes[0]!.lastEventId)).toBeGreaterThan(0);
    const ids = frames.map((streamed) => streamed.id);
    expect(ids.every((id, index) => index === 0 || id > ids[index - 1]!)).toBe(true);
    expect(frames[0]!.frame.type).toBe('run_started');
    expect(frames.at(-1)!.frame.type).toBe('done');
    expect(frames.filter((streamed) => isTerminalFrame(streamed.frame))).toHaveLength(1);

    // The same frames as one uninterrupted read from the start, and nothing after done.
    const replay = await collect(client.agent.resume(run.runId));
    expect(replay.map((streamed) => streamed.id)).toEqual(ids);
    expect(await collect(client.agent.resume(run.runId, ids.at(-1)))).toEqual([]);
    expect((await client.agent.run(run.runId)).phase).toBe('done');
  });
});
