import { errorFrame, frame } from '@quill/contracts';
import { describe, expect, it } from 'vitest';
import { runEndingFromFrame } from '../src/phases/run-ending.ts';

const RUN = 'run-1';

describe('runEndingFromFrame (the phases the router would have recorded)', () => {
  it.each([
    {
      name: 'completed',
      terminal: frame('workflow_complete', RUN, {}),
      run: { phase: 'done', stopReason: 'completed' },
    },
    {
      name: 'stopped by the author',
      terminal: frame('workflow_stopped', RUN, { reason: 'user_stopped' }),
      run: { phase: 'done', stopReason: 'user_stopped' },
    },
    {
      name: 'asking the author',
      terminal: frame('workflow_stopped', RUN, { reason: 'waiting_user' }),
      run: { phase: 'waiting_user', stopReason: 'waiting_user' },
    },
    {
      name: 'an error',
      terminal: errorFrame(RUN, 'worker_lost'),
      run: { phase: 'error', stopReason: 'error', errorCode: 'worker_lost' },
    },
  ])('$name', ({ terminal, run }) => {
    expect(runEndingFromFrame(terminal)).toEqual(run);
  });

  it('is nothing for a frame that does not end a run', () => {
    expect(runEndingFromFrame(frame('done', RUN, {}))).toBeUndefined();
  });
});
