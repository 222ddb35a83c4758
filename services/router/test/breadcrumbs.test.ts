import type { StepResult } from '@quill/contracts';
import { describe, expect, it } from 'vitest';
import { breadcrumbsFor } from '../src/breadcrumbs.ts';

const step = (index: number, extra: Partial<StepResult>): StepResult => ({
  step: index,
  role: 'writer',
  worker_instance: 'w',
  outcome: 'completed',
  stop_reason: 'stop',
  final_text: '',
  files_written: [],
  model_calls: 1,
  tool_calls: 0,
  ...extra,
});

describe('breadcrumbsFor', () => {
  it('lists each file once under what matters most, with its latest title', () => {
    const crumbs = breadcrumbsFor([
      step(0, {
        file_operations: [
          { op: 'read', file_id: 'outline', title: '大纲' },
          { op: 'created', file_id: 'ch1', title: '第一章' },
          { op: 'read', file_id: 'gone', title: '旧稿' },
        ],
      }),
      step(1, {
        file_operations: [
          { op: 'edited', file_id: 'ch1', title: '第一章 雨夜' },
          { op: 'deleted', file_id: 'gone', title: '旧稿' },
          { op: 'edited', file_id: 'outline', title: '大纲' },
        ],
      }),
    ]);
    expect(crumbs).toEqual({
      v: 1,
      created: [{ file_id: 'ch1', title: '第一章 雨夜' }],
      edited: [{ file_id: 'outline', title: '大纲' }],
      deleted: [{ file_id: 'gone', title: '旧稿' }],
      read: [],
    });
  });

  it('falls back to the step’s file writes, and is undefined when nothing was touched', () => {
    expect(
      breadcrumbsFor([
        step(0, {
          files_written: [{ file_id: 'a', title: 'A', file_type: 'draft', version: 2, body_chars: 10 }],
        }),
      ]),
    ).toMatchObject({ edited: [{ file_id: 'a', title: 'A' }] });
    expect(breadcrumbsFor([step(0, {})])).toBeUndefined();
  });
});
