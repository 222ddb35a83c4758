import type { StreamedFrame } from '@quill/client';
import { frame } from '@quill/contracts';
import { describe, expect, it } from 'vitest';
import { foldRun } from '../src/chat/run-view.ts';

const RUN = 'run-1';
let nextId = 0;
const at = (id: number, value: StreamedFrame['frame']): StreamedFrame => ({ id, frame: value });
const seq = (value: StreamedFrame['frame']): StreamedFrame => at(++nextId, value);

describe('foldRun', () => {
  it('joins one agent’s text deltas and keys each tool card by tool_call_id', () => {
    nextId = 0;
    const view = foldRun([
      seq(frame('agent_start', RUN, { agent: 'writer', step: 1 })),
      seq(frame('text', RUN, { agent: 'writer', content: '好的，' })),
      seq(frame('text', RUN, { agent: 'writer', content: '开始。' })),
      seq(
        frame('tool_call', RUN, {
          agent: 'writer',
          tool_call_id: 'a',
          tool_name: 'create_file',
          arguments: {},
        }),
      ),
      seq(
        frame('tool_call', RUN, {
          agent: 'writer',
          tool_call_id: 'b',
          tool_name: 'query_files',
          arguments: {},
        }),
      ),
      seq(
        frame('tool_result', RUN, {
          agent: 'writer',
          tool_call_id: 'b',
          tool_name: 'query_files',
          status: 'error',
          error_type: 'not_found',
          summary: 'no such file',
        }),
      ),
      seq(
        frame('tool_result', RUN, {
          agent: 'writer',
          tool_call_id: 'a',
          tool_name: 'create_file',
          status: 'ok',
          summary: 'made',
        }),
      ),
    ]);
    expect(view.items.map((item) => item.kind)).toEqual(['text', 'tool', 'tool']);
    expect(view.items[0]).toMatchObject({ content: '好的，开始。' });
    expect(view.items[1]).toMatchObject({ key: 'tool-a', status: 'ok', summary: 'made' });
    expect(view.items[2]).toMatchObject({ key: 'tool-b', status: 'error', errorType: 'not_found' });
  });

  it('streams a file body and marks a draft save, then ends on the terminal frame', () => {
    nextId = 0;
    const view = foldRun([
      seq(frame('file_start', RUN, { agent: 'writer', file_id: 'f', title: '第一章', file_type: 'draft' })),
      seq(frame('file_delta', RUN, { file_id: 'f', content: '雨夜' })),
      seq(frame('file_delta', RUN, { file_id: 'f', content: '书店' })),
    ]);
    expect(view.writingFileId).toBe('f');
    expect(view.files.get('f')).toMatchObject({ content: '雨夜书店', done: false });
    const saved = foldRun([
      at(1, frame('file_start', RUN, { agent: 'writer', file_id: 'f', title: '第一章', file_type: 'draft' })),
      at(
        2,
        frame('file_saved', RUN, {
          file_id: 'd',
          title: '第一章（AI 草稿）',
          version: 1,
          chars: 4,
          saved_as: 'draft',
          draft_of: { file_id: 'f', title: '第一章' },
          draft_reason: 'author_saved',
        }),
      ),
      at(3, frame('workflow_complete', RUN, {})),
      at(4, frame('done', RUN, {})),
    ]);
    expect(saved.writingFileId).toBeUndefined();
    expect(saved.items[0]).toMatchObject({ kind: 'file', saved: { saved_as: 'draft' } });
    expect(saved).toMatchObject({ ended: true, finished: true });
  });

  it('drops the redone frames of a resumed step (step_resumed), so no word shows twice', () => {
    const view = foldRun([
      at(1, frame('agent_start', RUN, { agent: 'writer', step: 1 })),
      at(2, frame('text', RUN, { agent: 'writer', content: '一二' })),
      at(3, frame('text', RUN, { agent: 'writer', content: '三四' })),
      at(4, frame('step_resumed', RUN, { agent: 'writer', step: 1, resumed_turn: 1, valid_through_id: 2 })),
      at(5, frame('text', RUN, { agent: 'writer', content: '三四五' })),
    ]);
    expect(view.items.filter((item) => item.kind === 'text').map((item) => item.content)).toEqual([
      '一二三四五',
    ]);
    const restarted = foldRun([
      at(1, frame('agent_start', RUN, { agent: 'writer', step: 1 })),
      at(2, frame('text', RUN, { agent: 'writer', content: '作废' })),
      at(3, frame('step_resumed', RUN, { agent: 'writer', step: 1, resumed_turn: 0, valid_through_id: 0 })),
      at(4, frame('agent_start', RUN, { agent: 'writer', step: 1 })),
      at(5, frame('text', RUN, { agent: 'writer', content: '重写' })),
    ]);
    expect(restarted.items.map((item) => (item.kind === 'text' ? item.content : item.kind))).toEqual([
      '重写',
    ]);
  });

  it('waits for the author after a clarification instead of showing a stop', () => {
    const view = foldRun([
      at(1, frame('clarification_requested', RUN, { agent: 'planner', question: '几章？' })),
      at(2, frame('workflow_stopped', RUN, { reason: 'waiting_user' })),
      at(3, frame('done', RUN, {})),
    ]);
    expect(view.waitingUser).toBe(true);
    expect(view.items.map((item) => item.kind)).toEqual(['clarification']);
  });
});
