import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { collectChat, type LlmAttempt, LlmCallError } from '../src/index.ts';
import { createScriptedModel, splitAt, textReply, toolReply } from '../src/testing.ts';
import type { LlmEvent } from '../src/types.ts';

const request = { messages: [{ role: 'user' as const, content: '写' }], role: 'writer', runId: 'r1' };

describe('scripted model (@quill/llm/testing)', () => {
  it('streams text and reasoning deltas and assembles the reply, usage from the last chunk', async () => {
    const model = createScriptedModel([
      [
        { reasoning: '先想' },
        { text: '雨' },
        { reasoning: '再想' },
        { text: '夜。' },
        { finish: 'stop', usage: { prompt_tokens: 7, completion_tokens: 3, total_tokens: 10 } },
      ],
    ]);
    const events: LlmEvent[] = [];
    const attempts: LlmAttempt[] = [];
    const result = await collectChat(
      model.streamChat({ ...request, onAttempt: (attempt) => attempts.push(attempt) }),
      (event) => {
        events.push(event);
      },
    );
    expect(events).toEqual([
      { type: 'thinking', delta: '先想' },
      { type: 'text', delta: '雨' },
      { type: 'thinking', delta: '再想' },
      { type: 'text', delta: '夜。' },
    ]);
    expect(result).toMatchObject({
      text: '雨夜。',
      thinking: '先想再想',
      finishReason: 'stop',
      usage: { prompt_tokens: 7, completion_tokens: 3, total_tokens: 10, usage_source: 'provider' },
    });
    expect(attempts).toMatchObject([{ index: 0, outcome: 'ok', outputStarted: true }]);
    expect(model.requests).toHaveLength(1);
    expect(model.remaining).toBe(0);
  });

  it('assembles tool-call arguments however they are split', async () => {
    const args = { title: '第一章', file_type: 'draft', folder: '正文/卷一' };
    const json = JSON.stringify(args);
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.integer({ min: 0, max: json.length }), { maxLength: 12 }),
        async (offsets) => {
          const model = createScriptedModel([
            toolReply([{ id: 'c1', name: 'create_file', arguments: args }], { offsets }),
          ]);
          const result = await collectChat(model.streamChat(request));
          expect(result.finishReason).toBe('tool_calls');
          expect(result.toolCalls).toEqual([
            { id: 'c1', type: 'function', function: { name: 'create_file', arguments: json } },
          ]);
        },
      ),
    );
  });

  it('splitAt keeps every character in order', () => {
    fc.assert(
      fc.property(fc.string(), fc.array(fc.integer({ min: -3, max: 40 })), (text, offsets) => {
        expect(splitAt(text, offsets).join('')).toBe(text);
      }),
    );
  });

  it('fails mid-stream with an LlmCallError that says whether output had started, and reports the attempt', async () => {
    const attempts: LlmAttempt[] = [];
    const model = createScriptedModel([[{ text: '写到' }, { error: { kind: 'http', status: 503 } }]]);
    const seen: string[] = [];
    const failure = await collectChat(
      model.streamChat({ ...request, onAttempt: (attempt) => attempts.push(attempt) }),
      (event) => {
        seen.push(event.type);
      },
    ).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(LlmCallError);
    expect(failure).toMatchObject({ kind: 'http', status: 503, outputStarted: true });
    expect(seen).toEqual(['text']);
    expect(attempts).toMatchObject([{ outcome: 'failed', errorKind: 'http', status: 503 }]);
  });

  it('ends an aborted call as aborted, and a stream without a finish as interrupted', async () => {
    const controller = new AbortController();
    const stopping = createScriptedModel([textReply('一二三', { offsets: [1, 2] })], {
      onChunk: (index) => {
        if (index === 0) controller.abort();
      },
    });
    await expect(
      collectChat(stopping.streamChat({ ...request, signal: controller.signal })),
    ).rejects.toMatchObject({
      kind: 'aborted',
    });
    const cut = createScriptedModel([[{ text: '半' }]]);
    await expect(collectChat(cut.streamChat(request))).rejects.toMatchObject({ kind: 'stream_interrupted' });
  });

  it('refuses a call it has no reply for', async () => {
    const model = createScriptedModel([]);
    await expect(collectChat(model.streamChat(request))).rejects.toThrow('no reply left');
  });
});
