import type { ChatMessage } from '@quill/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collectChat, createLlmClient, LlmCallError } from '../src/index.ts';
import { fitTranscript, TRIMMED_NOTE_PREFIX, trimTranscript } from '../src/intra-run-trimmer.ts';
import { estimatePromptTokens, promptTokensUpperBound } from '../src/token-estimate.ts';
import { call, type FailoverRig, startRig } from './failover-helpers.ts';

const SYSTEM = '你是小说写作助手。'.repeat(20);
const DIRECTIVE = '## 本次运行的系统指令\n请根据读到的资料写第一章。';
const reading = (index: number) =>
  JSON.stringify({ status: 'ok', content: `第${index}份资料：${'旧书店里的雨声和铃铛。'.repeat(130)}` });

function toolTurn(index: number): ChatMessage[] {
  const id = `call_${index}`;
  return [
    {
      role: 'assistant',
      content: null,
      tool_calls: [
        { id, type: 'function', function: { name: 'query_files', arguments: `{"q":"${index}"}` } },
      ],
    },
    { role: 'tool', tool_call_id: id, content: reading(index) },
  ];
}

describe('trimTranscript', () => {
  const transcript: ChatMessage[] = [
    { role: 'system', content: SYSTEM },
    { role: 'user', content: DIRECTIVE },
    ...toolTurn(1),
    ...toolTurn(2),
    ...toolTurn(3),
  ];

  it('leaves a transcript that fits untouched (same array)', () => {
    const fitted = trimTranscript(transcript, { maxInputTokens: 128_000 });
    expect(fitted.messages).toBe(transcript);
    expect(fitted.trimmedToolResults).toBe(0);
  });

  it('replaces the oldest tool results first and never touches the system prompt or the directive', () => {
    const full = estimatePromptTokens(transcript);
    // Room for everything but about one and a half tool results.
    const fitted = trimTranscript(transcript, { maxInputTokens: Math.floor((full - 2_000) / 0.9) });
    expect(fitted.trimmedToolResults).toBe(2);
    expect(fitted.overBudget).toBe(false);
    const tools = fitted.messages.filter((message) => message.role === 'tool');
    expect(tools.map((message) => message.content.startsWith(TRIMMED_NOTE_PREFIX))).toEqual([
      true,
      true,
      false,
    ]);
    // Every tool_call_id is still answered, in place.
    expect(fitted.messages.map((message) => message.role)).toEqual(transcript.map((message) => message.role));
    expect(tools.map((message) => message.role === 'tool' && message.tool_call_id)).toEqual([
      'call_1',
      'call_2',
      'call_3',
    ]);
    expect(fitted.messages[0]).toEqual(transcript[0]);
    expect(fitted.messages[1]).toEqual(transcript[1]);
    // The caller's transcript is not modified.
    expect(transcript[3]).toEqual(toolTurn(1)[1]);
  });

  it('counts exactly when only the cheap bound is over the budget, and still trims nothing that fits', () => {
    const exact = estimatePromptTokens(transcript);
    const bound = promptTokensUpperBound(transcript);
    expect(bound).toBeGreaterThan(exact);
    // A window the exact count fits but the byte bound does not.
    const fitted = trimTranscript(transcript, { maxInputTokens: Math.ceil((exact + 10) / 0.9) });
    expect(bound).toBeGreaterThan(Math.floor(Math.ceil((exact + 10) / 0.9) * 0.9));
    expect(fitted.messages).toBe(transcript);
    expect(fitted.estimatedTokens).toBe(exact);
  });

  it('fitTranscript answers as trimTranscript does, from the byte bound alone when it fits', async () => {
    const roomy = await fitTranscript(transcript, { maxInputTokens: 128_000 });
    expect(roomy.messages).toBe(transcript);
    expect(roomy.estimatedTokens).toBe(promptTokensUpperBound(transcript));
    for (const maxInputTokens of [Math.floor((estimatePromptTokens(transcript) - 2_000) / 0.9), 100]) {
      expect(await fitTranscript(transcript, { maxInputTokens })).toEqual(
        trimTranscript(transcript, { maxInputTokens }),
      );
    }
  });

  it('reports over budget when trimming every tool result is not enough', () => {
    const fitted = trimTranscript(transcript, { maxInputTokens: 100 });
    expect(fitted.trimmedToolResults).toBe(3);
    expect(fitted.overBudget).toBe(true);
  });
});

describe('promptTokensUpperBound', () => {
  it('is never below the tokenizer count, for CJK, ASCII, emoji, tool calls and tool definitions', () => {
    const samples: ChatMessage[][] = [
      [{ role: 'user', content: '雨夜里旧书店的灯还亮着。'.repeat(50) }],
      [{ role: 'user', content: 'The lamp in the old bookshop was still lit. '.repeat(50) }],
      [{ role: 'user', content: '🦊🌧️📚 𠀋𡈽𡌛 ﷽ '.repeat(40) }],
      [{ role: 'system', content: '' }, ...toolTurn(1), ...toolTurn(2)],
    ];
    const tools = [
      {
        type: 'function' as const,
        function: { name: 'query_files', description: '读取文件', parameters: { type: 'object' } },
      },
    ];
    for (const messages of samples) {
      expect(promptTokensUpperBound(messages)).toBeGreaterThanOrEqual(estimatePromptTokens(messages));
      expect(promptTokensUpperBound(messages, tools)).toBeGreaterThanOrEqual(
        estimatePromptTokens(messages, tools),
      );
    }
  });
});

describe('intra-run trimmer against a provider that enforces its window', () => {
  const WINDOW = 3_000;
  let rig: FailoverRig;

  beforeAll(async () => {
    rig = await startRig({ maxInputTokens: WINDOW });
  });
  afterAll(async () => {
    await rig?.close();
  });

  it('keeps a long tool loop under the limit, where the untrimmed transcript is refused', async () => {
    const runId = 'trim-loop';
    const turns = 10;
    rig.primary.addScript({
      match: { run_id: runId },
      responses: Array.from({ length: turns }, (_, index) => ({
        tool_calls: [{ name: 'query_files', arguments: { q: String(index + 1) } }],
      })),
    });
    const messages: ChatMessage[] = [
      { role: 'system', content: SYSTEM },
      { role: 'user', content: DIRECTIVE },
    ];
    let trimmedInLastCall = 0;
    for (let turn = 1; turn <= turns; turn++) {
      const { result, error, attempts } = await call(rig.client(), { runId, role: 'writer', messages });
      expect(error, `turn ${turn}`).toBeUndefined();
      expect(result?.provider).toBe('primary');
      trimmedInLastCall = attempts[0]!.trimmedToolResults;
      const [callMade] = result!.toolCalls;
      messages.push(
        { role: 'assistant', content: null, tool_calls: [callMade!] },
        { role: 'tool', tool_call_id: callMade!.id, content: reading(turn) },
      );
    }
    expect(trimmedInLastCall).toBeGreaterThan(0);
    expect(rig.backup.requests({ run_id: runId })).toHaveLength(0);

    const last = rig.primary.requests({ run_id: runId }).at(-1)!.body as { messages: ChatMessage[] };
    expect(last.messages[0]).toEqual({ role: 'system', content: SYSTEM });
    expect(last.messages[1]).toEqual({ role: 'user', content: DIRECTIVE });
    const toolContents = last.messages
      .filter((message) => message.role === 'tool')
      .map((message) => message.content);
    expect(toolContents[0]).toMatch(/^\[tool result removed/);
    expect(toolContents.at(-1)).toBe(reading(turns - 1));

    // The same transcript sent as is: the provider refuses it, which is what the trimmer prevents.
    const direct = createLlmClient({ provider: rig.providers[0]!, timeoutMs: 5_000 });
    const refused = await collectChat(
      direct.streamChat({ messages, role: 'writer', runId: 'trim-direct' }),
    ).catch((caught: unknown) => caught);
    expect(refused).toBeInstanceOf(LlmCallError);
    expect(refused).toMatchObject({ status: 400, providerCode: 'context_length_exceeded' });
  });
});
