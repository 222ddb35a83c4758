import type { ChatMessage } from '@quill/contracts';
import { type FakeLlm, startFakeLlm } from '@quill/fake-llm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collectChat, createLlmClient, estimateTextTokens, type LlmClient } from '../src/index.ts';
import type { LlmEvent, ToolDefinition } from '../src/types.ts';

let fake: FakeLlm;
let client: LlmClient;

const createFileTool: ToolDefinition = {
  type: 'function',
  function: {
    name: 'create_file',
    description: 'Create an empty file; its body follows in <file> tags.',
    parameters: {
      type: 'object',
      properties: { title: { type: 'string' }, file_type: { type: 'string' } },
      required: ['title', 'file_type'],
    },
  },
};

beforeAll(async () => {
  fake = await startFakeLlm({ port: 0 });
  client = createLlmClient({
    provider: {
      name: 'primary',
      baseUrl: fake.url,
      apiKey: 'test-key',
      model: 'quill-fake-1',
      maxInputTokens: 128_000,
    },
    timeoutMs: 10_000,
  });
});
afterAll(async () => {
  await fake.close();
});

async function run(
  runId: string,
  role = 'writer',
  messages: ChatMessage[] = [{ role: 'user', content: '写第一章' }],
) {
  const events: LlmEvent[] = [];
  const result = await collectChat(
    client.streamChat({ messages, tools: [createFileTool], role, runId }),
    (event) => {
      events.push(event);
    },
  );
  return { events, result };
}

describe('streamChat', () => {
  it('assembles streamed text and tool calls, announcing each call once', async () => {
    const { events, result } = await run('llm-1');
    const text = events.flatMap((event) => (event.type === 'text' ? [event.delta] : [])).join('');
    expect(result.text).toBe(text);
    expect(text.length).toBeGreaterThan(0);
    expect(result.finishReason).toBe('tool_calls');
    expect(result.toolCalls).toHaveLength(1);
    const [call] = result.toolCalls;
    expect(call?.function.name).toBe('create_file');
    expect(JSON.parse(call?.function.arguments ?? '')).toEqual({
      title: '第一章 雨夜里的旧书店',
      file_type: 'draft',
    });
    const started = events.filter((event) => event.type === 'tool_call_started');
    expect(started).toEqual([{ type: 'tool_call_started', index: 0, id: call?.id, name: 'create_file' }]);
    expect(result.provider).toBe('primary');
    expect(result.model).toBe('quill-fake-1');
    expect(result.firstTokenAt).toBeTypeOf('number');
  });

  it('sends the role and run id headers, the tools and include_usage', async () => {
    await run('llm-2', 'planner');
    const [recorded] = fake.requests({ run_id: 'llm-2' });
    expect(recorded?.role).toBe('planner');
    expect(recorded?.body).toMatchObject({
      model: 'quill-fake-1',
      stream: true,
      stream_options: { include_usage: true },
      tools: [createFileTool],
    });
  });

  it('streams the file body after the tool result', async () => {
    const first = await run('llm-3');
    const call = first.result.toolCalls[0]!;
    const { result } = await run('llm-3', 'writer', [
      { role: 'user', content: '写第一章' },
      { role: 'assistant', content: first.result.text, tool_calls: [call] },
      { role: 'tool', tool_call_id: call.id, content: '{"ok":true}' },
    ]);
    expect(result.finishReason).toBe('stop');
    expect(result.toolCalls).toEqual([]);
    expect(result.text).toMatch(/^<file>\n[\s\S]{600,}\n<\/file>\n/);
  });

  it('reports provider usage when the provider sends it', async () => {
    const { result } = await run('llm-4');
    const [recorded] = fake.requests({ run_id: 'llm-4' });
    expect(recorded).toBeDefined();
    expect(result.usage.usage_source).toBe('provider');
    expect(result.usage.prompt_tokens).toBe(2);
    expect(result.usage.total_tokens).toBe(result.usage.prompt_tokens + result.usage.completion_tokens);
  });

  it('estimates usage, marked as an estimate, when the provider sends none', async () => {
    fake.addScript({ match: { run_id: 'llm-5' }, responses: [{ text: '没有用量的回复', no_usage: true }] });
    const { result } = await run('llm-5');
    expect(result.text).toBe('没有用量的回复');
    expect(result.usage.usage_source).toBe('estimate');
    // Counted with the real tokenizer (o200k for non-OpenAI model names), not characters.
    expect(result.usage.completion_tokens).toBe(estimateTextTokens('没有用量的回复'));
    expect(result.usage.completion_tokens).toBeLessThan('没有用量的回复'.length);
    expect(result.usage.prompt_tokens).toBeGreaterThan(0);
  });

  it('emits reasoning_content as thinking events', async () => {
    fake.addScript({
      match: { run_id: 'llm-6' },
      responses: [{ reasoning: '先想清楚人物动机', text: '好的' }],
    });
    const { events, result } = await run('llm-6');
    const thinking = events.flatMap((event) => (event.type === 'thinking' ? [event.delta] : [])).join('');
    expect(thinking).toBe('先想清楚人物动机');
    expect(result.thinking).toBe(thinking);
    expect(result.text).toBe('好的');
  });

  it('reports a length finish', async () => {
    fake.addScript({
      match: { run_id: 'llm-7' },
      responses: [{ text: '写到一半', finish_reason: 'length' }],
    });
    const { result } = await run('llm-7');
    expect(result.finishReason).toBe('length');
  });
});
