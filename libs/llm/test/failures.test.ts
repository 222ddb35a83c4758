import { QuillError } from '@quill/contracts';
import { type FakeLlm, startFakeLlm } from '@quill/fake-llm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toQuillError } from '../src/errors.ts';
import {
  collectChat,
  createLlmClient,
  LlmCallError,
  type LlmClient,
  type LlmProvider,
  quillErrorCodeFor,
} from '../src/index.ts';

let fake: FakeLlm;
let provider: LlmProvider;
let client: LlmClient;

beforeAll(async () => {
  fake = await startFakeLlm({ port: 0, maxInputTokens: 50 });
  provider = {
    name: 'primary',
    baseUrl: fake.url,
    apiKey: 'test-key',
    model: 'quill-fake-1',
    maxInputTokens: 50,
  };
  client = createLlmClient({ provider, timeoutMs: 10_000 });
});
afterAll(async () => {
  await fake.close();
});

const hello = [{ role: 'user' as const, content: '你好' }];

async function failure(promise: Promise<unknown>): Promise<LlmCallError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(LlmCallError);
  return error as LlmCallError;
}

describe('failures', () => {
  it('an HTTP 500 before any output is an http error with outputStarted=false', async () => {
    fake.addScript({ match: { run_id: 'f1' }, responses: [{ error: { status: 500 } }] });
    const texts: string[] = [];
    const error = await failure(
      collectChat(client.streamChat({ messages: hello, role: 'writer', runId: 'f1' }), (event) => {
        if (event.type === 'text') texts.push(event.delta);
      }),
    );
    expect(error).toMatchObject({ provider: 'primary', kind: 'http', status: 500, outputStarted: false });
    expect(texts).toEqual([]);
    expect(quillErrorCodeFor(error)).toBe('model_unavailable');
    // No SDK retry behind the caller's back: exactly one request reached the provider.
    expect(fake.requests({ run_id: 'f1' })).toHaveLength(1);
  });

  it('a disconnect mid-stream is stream_interrupted with outputStarted=true', async () => {
    fake.addScript({
      match: { run_id: 'f2' },
      responses: [{ text: '雨夜里的旧书店'.repeat(20), disconnect_after_chars: 10 }],
    });
    let received = '';
    const error = await failure(
      collectChat(client.streamChat({ messages: hello, role: 'writer', runId: 'f2' }), (event) => {
        if (event.type === 'text') received += event.delta;
      }),
    );
    expect(error).toMatchObject({ kind: 'stream_interrupted', outputStarted: true });
    expect(received.length).toBeGreaterThanOrEqual(10);
    expect(quillErrorCodeFor(error)).toBe('model_error');
  });

  it('a disconnect before any token is stream_interrupted with outputStarted=false', async () => {
    fake.addScript({ match: { run_id: 'f3' }, responses: [{ text: '不会送达', disconnect_after_chars: 0 }] });
    const error = await failure(
      collectChat(client.streamChat({ messages: hello, role: 'writer', runId: 'f3' })),
    );
    expect(error).toMatchObject({ kind: 'stream_interrupted', outputStarted: false });
  });

  it('aborting through the signal mid-stream ends the call as aborted', async () => {
    fake.addScript({
      match: { run_id: 'f4' },
      responses: [{ text: '慢慢地写'.repeat(50), tokens_per_second: 50 }],
    });
    const controller = new AbortController();
    let received = 0;
    const error = await failure(
      collectChat(
        client.streamChat({ messages: hello, role: 'writer', runId: 'f4', signal: controller.signal }),
        (event) => {
          if (event.type === 'text' && ++received === 2) controller.abort();
        },
      ),
    );
    expect(error).toMatchObject({ kind: 'aborted', outputStarted: true });
    expect(received).toBeLessThan(200);
  });

  it('an already aborted signal fails before any request', async () => {
    const controller = new AbortController();
    controller.abort();
    const error = await failure(
      collectChat(
        client.streamChat({ messages: hello, role: 'writer', runId: 'f5', signal: controller.signal }),
      ),
    );
    expect(error).toMatchObject({ kind: 'aborted', outputStarted: false });
  });

  it('a provider that stays silent past timeoutMs is a timeout', async () => {
    const impatient = createLlmClient({ provider, timeoutMs: 200 });
    fake.addScript({ match: { run_id: 'f6' }, responses: [{ text: '来得太迟', ttft_ms: 5_000 }] });
    const error = await failure(
      collectChat(impatient.streamChat({ messages: hello, role: 'writer', runId: 'f6' })),
    );
    expect(error).toMatchObject({ kind: 'timeout', outputStarted: false });
    expect(quillErrorCodeFor(error)).toBe('model_unavailable');
  });

  it('the timeout bounds silence, not the whole stream', async () => {
    const patient = createLlmClient({ provider, timeoutMs: 300 });
    const text = '一字一字地写'.repeat(10);
    fake.addScript({ match: { run_id: 'f7' }, responses: [{ text, tokens_per_second: 100 }] });
    const result = await collectChat(patient.streamChat({ messages: hello, role: 'writer', runId: 'f7' }));
    expect(result.text).toBe(text);
  });

  it('an unreachable provider is a connection error', async () => {
    const closed = await startFakeLlm({ port: 0 });
    await closed.close();
    const unreachable = createLlmClient({ provider: { ...provider, baseUrl: closed.url }, timeoutMs: 5_000 });
    const error = await failure(
      collectChat(unreachable.streamChat({ messages: hello, role: 'writer', runId: 'f8' })),
    );
    expect(error).toMatchObject({ kind: 'connection', outputStarted: false });
    expect(toQuillError(error)).toBeInstanceOf(QuillError);
    expect(toQuillError(error).code).toBe('model_unavailable');
  });

  it('keeps the provider error code, e.g. context_length_exceeded', async () => {
    const messages = [{ role: 'user' as const, content: '长'.repeat(200) }];
    const error = await failure(collectChat(client.streamChat({ messages, role: 'writer', runId: 'f9' })));
    expect(error).toMatchObject({ kind: 'http', status: 400, providerCode: 'context_length_exceeded' });
    const quillError = toQuillError(error);
    expect(quillError.code).toBe('model_error');
    expect(quillError.details).toMatchObject({ provider: 'primary', output_started: false });
  });
});
