import type OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeLlm, ROUTER_DECISION, startFakeLlm } from '../src/index.ts';
import { openaiClient, streamCompletion } from './helpers.ts';

let fake: FakeLlm;
let client: OpenAI;

beforeAll(async () => {
  fake = await startFakeLlm({ port: 0 });
  client = openaiClient(fake.url);
});
afterAll(async () => {
  await fake.close();
});

const writerHeaders = (runId: string) => ({ 'x-quill-role': 'writer', 'x-quill-run-id': runId });

describe('writer role, two-reply file protocol', () => {
  it('first reply announces and ends with a create_file call whose arguments parse', async () => {
    const result = await streamCompletion(
      client,
      [{ role: 'user', content: '写第一章' }],
      writerHeaders('r1'),
    );
    expect(result.text.length).toBeGreaterThan(0);
    expect(result.finishReason).toBe('tool_calls');
    expect(result.toolCalls).toHaveLength(1);
    const [call] = result.toolCalls;
    expect(call?.name).toBe('create_file');
    expect(call?.id).toMatch(/^call_/);
    expect(JSON.parse(call?.arguments ?? '')).toEqual({ title: '第一章 雨夜里的旧书店', file_type: 'draft' });
    // Arguments arrive over several deltas, as real providers send them.
    const argumentDeltas = result.chunks.filter(
      (chunk) => chunk.choices[0]?.delta.tool_calls?.[0]?.function?.arguments,
    );
    expect(argumentDeltas.length).toBeGreaterThan(3);
  });

  it('gives every tool call a new id', async () => {
    const first = await streamCompletion(client, [{ role: 'user', content: '写' }], writerHeaders('r2'));
    const second = await streamCompletion(client, [{ role: 'user', content: '写' }], writerHeaders('r2'));
    expect(first.toolCalls[0]?.id).not.toBe(second.toolCalls[0]?.id);
  });

  it('after the tool result streams the chapter inside <file> tags, then a summary', async () => {
    const first = await streamCompletion(
      client,
      [{ role: 'user', content: '写第一章' }],
      writerHeaders('r3'),
    );
    const call = first.toolCalls[0]!;
    const result = await streamCompletion(
      client,
      [
        { role: 'user', content: '写第一章' },
        {
          role: 'assistant',
          content: first.text,
          tool_calls: [
            { id: call.id, type: 'function', function: { name: call.name, arguments: call.arguments } },
          ],
        },
        { role: 'tool', tool_call_id: call.id, content: '{"file_id":"f1"}' },
      ],
      writerHeaders('r3'),
    );
    expect(result.finishReason).toBe('stop');
    expect(result.toolCalls).toHaveLength(0);
    const match = /^<file>\n([\s\S]+)\n<\/file>\n(.+)$/.exec(result.text);
    expect(match).not.toBeNull();
    expect(match?.[1]?.length).toBeGreaterThanOrEqual(600);
    expect(match?.[2]?.length).toBeGreaterThan(0);
  });

  it('streams one small token per chunk, each stamped with x_emitted_at', async () => {
    const result = await streamCompletion(client, [{ role: 'user', content: '写' }], writerHeaders('r4'));
    const contentChunks = result.chunks.filter((chunk) => chunk.choices[0]?.delta.content);
    expect(contentChunks.length).toBeGreaterThan(10);
    for (const chunk of contentChunks) {
      expect(chunk.choices[0]?.delta.content?.length).toBeLessThanOrEqual(3);
      expect(typeof (chunk as unknown as { x_emitted_at: unknown }).x_emitted_at).toBe('number');
    }
  });
});

describe('pacing', () => {
  it('honours the per-request pacing headers and stamps chunks in emission order', async () => {
    const paced = await streamCompletion(client, [{ role: 'user', content: '写' }], {
      ...writerHeaders('r5'),
      'x-fake-ttft-ms': '5',
      'x-fake-tokens-per-second': '2000',
    });
    const unpaced = await streamCompletion(client, [{ role: 'user', content: '写' }], writerHeaders('r6'));
    expect(paced.text).toBe(unpaced.text);
    const stamps = paced.chunks.map((chunk) => (chunk as unknown as { x_emitted_at: number }).x_emitted_at);
    expect(stamps).toEqual([...stamps].sort((left, right) => left - right));
  });

  it('still writes the file body when an author interjection follows the tool result', async () => {
    const result = await streamCompletion(
      client,
      [
        { role: 'user', content: '写第一章' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'c1', type: 'function', function: { name: 'create_file', arguments: '{}' } }],
        },
        { role: 'tool', tool_call_id: 'c1', content: 'ok' },
        { role: 'user', content: '插话：多写点雨声' },
      ],
      writerHeaders('r7'),
    );
    expect(result.text.startsWith('<file>\n')).toBe(true);
  });
});

describe('usage', () => {
  it('sends a final usage chunk with no choices when include_usage is set', async () => {
    const result = await streamCompletion(client, [{ role: 'user', content: 'abcdef' }], {
      'x-quill-role': 'quality_reviewer',
    });
    const last = result.chunks.at(-1)!;
    expect(last.choices).toEqual([]);
    const tokenChunks = result.chunks.filter((chunk) => chunk.choices[0]?.delta.content);
    expect(last.usage).toEqual({
      prompt_tokens: 3,
      completion_tokens: tokenChunks.length,
      total_tokens: 3 + tokenChunks.length,
    });
    expect(result.text.startsWith('审查结论：通过')).toBe(true);
  });

  it('sends no usage chunk when include_usage is not set', async () => {
    const result = await streamCompletion(client, [{ role: 'user', content: 'hi' }], {}, false);
    expect(result.chunks.every((chunk) => !chunk.usage)).toBe(true);
    expect(result.chunks.at(-1)?.choices[0]?.finish_reason).toBe('stop');
  });

  it('answers non-streaming requests with a chat.completion and usage', async () => {
    const completion = await client.chat.completions.create(
      { model: 'quill-fake-1', messages: [{ role: 'user', content: '写第一章' }] },
      { headers: { 'x-quill-role': 'router' } },
    );
    expect(completion.object).toBe('chat.completion');
    expect(JSON.parse(completion.choices[0]?.message.content ?? '')).toEqual(ROUTER_DECISION);
    expect(completion.usage?.prompt_tokens).toBe(2);
    expect(completion.usage?.completion_tokens).toBeGreaterThan(0);
  });
});

describe('other roles and endpoints', () => {
  it('suggest answers a JSON array of three suggestions', async () => {
    const result = await streamCompletion(client, [{ role: 'user', content: '下一步？' }], {
      'x-quill-role': 'suggest',
    });
    const suggestions = JSON.parse(result.text) as unknown[];
    expect(suggestions).toHaveLength(3);
  });

  it('planner creates an outline file', async () => {
    const result = await streamCompletion(client, [{ role: 'user', content: '规划全书' }], {
      'x-quill-role': 'planner',
    });
    expect(JSON.parse(result.toolCalls[0]?.arguments ?? '').file_type).toBe('outline');
  });

  it('lists the model', async () => {
    const models = await client.models.list();
    expect(models.data.map((model) => model.id)).toEqual(['quill-fake-1']);
  });

  it('rejects requests without a bearer token with 401', async () => {
    const response = await fetch(`${fake.url}/models`);
    expect(response.status).toBe(401);
    const body = (await response.json()) as { error: { code: string } };
    expect(body.error.code).toBe('invalid_api_key');
  });
});
