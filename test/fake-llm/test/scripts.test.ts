import type OpenAI from 'openai';
import { APIError } from 'openai';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type FakeLlm, type RecordedRequest, startFakeLlm } from '../src/index.ts';
import { openaiClient, streamCompletion } from './helpers.ts';

let fake: FakeLlm;
let client: OpenAI;

beforeAll(async () => {
  fake = await startFakeLlm({ port: 0, maxInputTokens: 1000 });
  client = openaiClient(fake.url);
});
afterEach(() => {
  fake.clearScripts();
});
afterAll(async () => {
  await fake.close();
});

async function postScript(script: unknown): Promise<Response> {
  return fetch(`${fake.url.replace(/\/v1$/, '')}/__scripts`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(script),
  });
}

const run = (runId: string, role = 'writer') => ({ 'x-quill-role': role, 'x-quill-run-id': runId });
const hello = [{ role: 'user' as const, content: '你好' }];

describe('scripted responses', () => {
  it('plays steps in order for the matching run, then falls back to the defaults', async () => {
    const response = await postScript({
      match: { run_id: 's1' },
      responses: [
        { text: '第一步', tool_calls: [{ name: 'query_files', arguments: { id: 'f1' } }] },
        { text: '写到一半', finish_reason: 'length' },
      ],
    });
    expect(response.status).toBe(201);
    const first = await streamCompletion(client, hello, run('s1'));
    expect(first.text).toBe('第一步');
    expect(first.toolCalls.map((call) => [call.name, JSON.parse(call.arguments)])).toEqual([
      ['query_files', { id: 'f1' }],
    ]);
    expect(first.finishReason).toBe('tool_calls');
    const second = await streamCompletion(client, hello, run('s1'));
    expect(second).toMatchObject({ text: '写到一半', finishReason: 'length' });
    const third = await streamCompletion(client, hello, run('s1'));
    expect(third.toolCalls[0]?.name).toBe('create_file');
  });

  it('does not apply a script to other runs; the newest matching script wins', async () => {
    fake.addScript({ match: { role: 'writer' }, responses: [{ text: '旧脚本' }] });
    fake.addScript({ match: { role: 'writer' }, responses: [{ text: '新脚本' }] });
    fake.addScript({ match: { run_id: 'other' }, responses: [{ text: '别的运行' }] });
    expect((await streamCompletion(client, hello, run('s2'))).text).toBe('新脚本');
    expect((await streamCompletion(client, hello, run('s2'))).text).toBe('旧脚本');
  });

  it('answers a scripted HTTP error before any token', async () => {
    fake.addScript({ match: { run_id: 's3' }, responses: [{ error: { status: 500 } }] });
    const chunks: unknown[] = [];
    const attempt = async () => {
      const stream = await client.chat.completions.create(
        { model: 'm', messages: hello, stream: true },
        { headers: run('s3') },
      );
      for await (const chunk of stream) chunks.push(chunk);
    };
    const error = await attempt().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(APIError);
    expect((error as APIError).status).toBe(500);
    expect(chunks).toHaveLength(0);
  });

  it('cuts the stream mid-way on a disconnect step', async () => {
    fake.addScript({
      match: { run_id: 's4' },
      responses: [{ text: '一二三四五六七八九十'.repeat(10), disconnect_after_chars: 12 }],
    });
    const stream = await client.chat.completions.create(
      { model: 'm', messages: hello, stream: true },
      { headers: run('s4') },
    );
    let text = '';
    const error = await (async () => {
      for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    })().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(Error);
    expect(text).toBe('一二三四五六七八九十一二');
  });

  it('omits the usage chunk on a no_usage step', async () => {
    fake.addScript({ match: { run_id: 's5' }, responses: [{ text: '没有用量', no_usage: true }] });
    const result = await streamCompletion(client, hello, run('s5'));
    expect(result.text).toBe('没有用量');
    expect(result.chunks.some((chunk) => chunk.usage)).toBe(false);
  });

  it('streams scripted reasoning as reasoning_content deltas', async () => {
    fake.addScript({ match: { run_id: 's6' }, responses: [{ reasoning: '先想一想', text: '好' }] });
    const result = await streamCompletion(client, hello, run('s6'));
    const reasoning = result.chunks
      .map(
        (chunk) => (chunk.choices[0]?.delta as { reasoning_content?: string } | undefined)?.reasoning_content,
      )
      .join('');
    expect(reasoning).toBe('先想一想');
    expect(result.text).toBe('好');
  });

  it('fails loudly with 500 script exhausted once a strict script runs out', async () => {
    fake.addScript({ match: { run_id: 's7' }, strict: true, responses: [{ text: '唯一一步' }] });
    expect((await streamCompletion(client, hello, run('s7'))).text).toBe('唯一一步');
    const error = await streamCompletion(client, hello, run('s7')).catch((caught: unknown) => caught);
    expect((error as APIError).status).toBe(500);
    expect((error as APIError).message).toContain('script exhausted');
  });

  it('rejects an invalid script with 400', async () => {
    const response = await postScript({ match: {}, responses: [] });
    expect(response.status).toBe(400);
  });

  it('DELETE /__scripts clears every script', async () => {
    fake.addScript({ match: { run_id: 's8' }, responses: [{ text: '脚本' }] });
    const response = await fetch(`${fake.url.replace(/\/v1$/, '')}/__scripts`, { method: 'DELETE' });
    expect(response.status).toBe(200);
    expect((await streamCompletion(client, hello, run('s8'))).toolCalls[0]?.name).toBe('create_file');
  });
});

describe('provider limits and request recording', () => {
  it('rejects prompts above maxInputTokens with context_length_exceeded', async () => {
    const error = await streamCompletion(
      client,
      [{ role: 'user', content: '长'.repeat(2001) }],
      run('s9'),
    ).catch((caught: unknown) => caught);
    expect((error as APIError).status).toBe(400);
    expect((error as APIError).code).toBe('context_length_exceeded');
  });

  it('records every request body with its role and run id', async () => {
    await streamCompletion(client, [{ role: 'user', content: '插话：改成第三人称' }], run('s10', 'planner'));
    const response = await fetch(`${fake.url.replace(/\/v1$/, '')}/__requests?run_id=s10`);
    const { requests } = (await response.json()) as { requests: RecordedRequest[] };
    expect(requests).toHaveLength(1);
    expect(requests[0]).toMatchObject({
      run_id: 's10',
      role: 'planner',
      body: { messages: [{ role: 'user', content: '插话：改成第三人称' }], stream: true },
    });
    expect(fake.requests({ run_id: 's10', role: 'planner' })).toHaveLength(1);
    expect(fake.requests({ run_id: 's10', role: 'writer' })).toHaveLength(0);
  });
});
