import type { ChatMessage } from '@quill/contracts';
import { describe, expect, it } from 'vitest';
import { fileOperationsFromTranscript } from '../src/file-operations.ts';

const call = (id: string, name: string): ChatMessage => ({
  role: 'assistant',
  content: null,
  tool_calls: [{ id, type: 'function', function: { name, arguments: '{}' } }],
});
const result = (id: string, outcome: unknown): ChatMessage => ({
  role: 'tool',
  tool_call_id: id,
  content: JSON.stringify(outcome),
});
const ok = (data: Record<string, unknown>) => ({ status: 'ok', summary: '', data });

describe('fileOperationsFromTranscript', () => {
  it('reads created / edited / deleted / whole-file reads off the step’s own tool results', () => {
    const messages: ChatMessage[] = [
      { role: 'user', content: '写' },
      call('1', 'create_file'),
      result('1', ok({ file_id: 'ch1', title: '第一章' })),
      call('2', 'query_files'),
      result('2', ok({ id: 'outline', title: '大纲', full_text: true })),
      call('3', 'query_files'),
      result('3', ok({ id: 'ch9', title: '第九章', full_text: false })),
      call('4', 'delete_file'),
      result('4', ok({ deleted: [{ id: 'old', title: '旧稿' }] })),
      call('5', 'edit_file'),
      result('5', { status: 'error', error_type: 'stale_content', message: 'x' }),
      call('6', 'rename_file'),
      result('6', ok({ file_id: 'n1', old_title: '灵感', title: '灵感 1' })),
    ];
    const writes = [
      { file_id: 'ch1', title: '第一章', file_type: 'draft', version: 1, body_chars: 10 },
      { file_id: 'ch2', title: '第二章', file_type: 'draft', version: 3, body_chars: 10 },
      {
        file_id: 'd1',
        title: '第三章（AI 草稿）',
        file_type: 'draft',
        version: 1,
        body_chars: 10,
        draft_of: { file_id: 'ch3', title: '第三章' },
        draft_reason: 'author_saved' as const,
      },
    ];
    expect(fileOperationsFromTranscript(messages, writes)).toEqual([
      { op: 'created', file_id: 'ch1', title: '第一章' },
      { op: 'read', file_id: 'outline', title: '大纲' },
      { op: 'deleted', file_id: 'old', title: '旧稿' },
      { op: 'edited', file_id: 'n1', title: '灵感 1' },
      // A body written into a file this step did not create is an edit.
      { op: 'edited', file_id: 'ch2', title: '第二章' },
      // A body that went to a draft created that draft.
      { op: 'created', file_id: 'd1', title: '第三章（AI 草稿）' },
    ]);
  });
});
