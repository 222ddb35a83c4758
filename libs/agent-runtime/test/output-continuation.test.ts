import type { ChatMessage } from '@quill/contracts';
import { CONTINUATION_PROMPT } from '@quill/llm';
import type { PendingFile } from '@quill/tools';
import { describe, expect, it } from 'vitest';
import { createFileCapture } from '../src/file-capture.ts';
import type { TurnResult } from '../src/model-turn.ts';
import { createContinuationTracker } from '../src/output-continuation.ts';

const pending: PendingFile = { fileId: 'f1', title: '第一章', fileType: 'draft', baseVersion: 0 };

function reply(partial: Partial<TurnResult>): TurnResult {
  return {
    text: '',
    toolCalls: [],
    finishReason: 'stop',
    usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2, usage_source: 'provider' },
    provider: 'primary',
    model: 'm',
    filesWritten: [],
    notices: [],
    rawText: '',
    failovers: 0,
    ...partial,
  };
}

describe('output continuation', () => {
  it('continues a length cut at most N times, carrying an open <file> body into the next call', () => {
    const tracker = createContinuationTracker(2);
    const messages: ChatMessage[] = [];
    expect(tracker.nextCall()).toEqual({ keepOpenOnLength: true });

    const open = { file: pending, body: '前半' };
    const cut = reply({ finishReason: 'length', rawText: '<file>\n前半', openCapture: open });
    expect(tracker.continueAfter(cut, messages)).toBe(true);
    expect(messages).toEqual([
      { role: 'assistant', content: '<file>\n前半' },
      { role: 'user', content: CONTINUATION_PROMPT },
    ]);
    expect(tracker.nextCall()).toEqual({ resume: open, keepOpenOnLength: true });

    expect(tracker.continueAfter(reply({ finishReason: 'length', rawText: '中段' }), messages)).toBe(true);
    // The last continuation must close whatever it writes: no more follow-ups are allowed.
    expect(tracker.nextCall()).toEqual({ keepOpenOnLength: false });
    expect(tracker.continueAfter(reply({ finishReason: 'length' }), messages)).toBe(false);
  });

  it('does not continue a finished reply; an open body left at the end is handed back for saving', () => {
    const tracker = createContinuationTracker(0);
    const open = { file: pending, body: '残稿' };
    expect(tracker.continueAfter(reply({ finishReason: 'length', openCapture: open }), [])).toBe(false);
    expect(tracker.takeOpenCapture()).toBe(open);
    expect(tracker.takeOpenCapture()).toBeUndefined();
    expect(createContinuationTracker(3).continueAfter(reply({ finishReason: 'stop' }), [])).toBe(false);
  });

  it('a capture resumed inside a body treats the continuation as body until </file>', () => {
    const capture = createFileCapture({ capturing: true });
    expect(capture.feed('后半。\n</file>\n写完了')).toEqual([
      { kind: 'file_delta', text: '后半。\n' },
      { kind: 'file_close' },
      { kind: 'text', text: '写完了' },
    ]);
  });
});
