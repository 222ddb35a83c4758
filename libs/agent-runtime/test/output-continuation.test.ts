import { CONTINUATION_PROMPT } from '@quill/llm';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createFileCapture } from '../src/file-capture.ts';
import type { TurnResult } from '../src/model-turn.ts';
import { continuationAfter, mayKeepOpen } from '../src/output-continuation.ts';

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
  it('continues a length cut while continuations are left, with the partial reply and the request', () => {
    const cut = reply({ finishReason: 'length', rawText: '<file>\n前半' });
    expect(continuationAfter(cut, 0, 2)).toEqual([
      { role: 'assistant', content: '<file>\n前半' },
      { role: 'user', content: CONTINUATION_PROMPT },
    ]);
    expect(continuationAfter(cut, 1, 2)).toHaveLength(2);
    // The last continuation must close whatever it writes: no more follow-ups are allowed.
    expect(continuationAfter(cut, 2, 2)).toBeUndefined();
    expect(mayKeepOpen(1, 2)).toBe(true);
    expect(mayKeepOpen(2, 2)).toBe(false);
  });

  it('does not continue a finished reply, nor a cut one that called tools', () => {
    expect(continuationAfter(reply({ finishReason: 'stop' }), 0, 3)).toBeUndefined();
    const withTools = reply({
      finishReason: 'length',
      toolCalls: [{ id: 'c', type: 'function', function: { name: 'query_files', arguments: '{}' } }],
    });
    expect(continuationAfter(withTools, 0, 3)).toBeUndefined();
  });

  it('continues exactly while used < max (property)', () => {
    fc.assert(
      fc.property(
        fc.nat(6),
        fc.nat(6),
        fc.constantFrom('stop', 'length', 'tool_calls'),
        (used, max, finish) => {
          const more = continuationAfter(reply({ finishReason: finish, rawText: 'x' }), used, max);
          expect(more !== undefined).toBe(finish === 'length' && used < max);
        },
      ),
    );
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
