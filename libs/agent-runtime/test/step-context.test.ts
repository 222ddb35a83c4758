import type { TaskEnvelope } from '@quill/contracts';
import { describe, expect, it } from 'vitest';
import { compileRequestOf } from '../src/step-context.ts';

const task: TaskEnvelope = {
  v: 1,
  run_id: 'run-1',
  session_id: 'session-1',
  project_id: 'project-1',
  user_id: 'user-1',
  step: 2,
  role: 'quality_reviewer',
  epoch: 1,
  generation_mode: 'quality',
  context: {
    message: '审查第一章',
    focus_file_id: 'file-1',
    attached_file_ids: ['file-2'],
    ui_language: 'en',
  },
  directive: '审',
};

describe('the compile request of a task (dispatch by reference)', () => {
  it('names the task’s step and role and what the context is compiled from', () => {
    expect(compileRequestOf(task, false)).toEqual({
      v: 1,
      run_id: 'run-1',
      session_id: 'session-1',
      project_id: 'project-1',
      user_id: 'user-1',
      role: 'quality_reviewer',
      step: 2,
      message: '审查第一章',
      focus_file_id: 'file-1',
      attached_file_ids: ['file-2'],
      ui_language: 'en',
    });
  });

  it('asks a redelivery for the prompt its first delivery ran with', () => {
    expect(compileRequestOf(task, true)).toMatchObject({ step: 2, reuse: true });
  });
});
