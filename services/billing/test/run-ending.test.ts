import { errorFrame, frame } from '@quill/contracts';
import { describe, expect, it } from 'vitest';
import { outcomeOfRow, runEndingFromFrame } from '../src/run-ending.ts';

const RUN = 'run-1';

describe('runEndingFromFrame (the phases the router would have recorded)', () => {
  it.each([
    {
      name: 'completed',
      terminal: frame('workflow_complete', RUN, {}),
      run: { phase: 'done', stopReason: 'completed' },
      session: 'idle',
    },
    {
      name: 'stopped by the author',
      terminal: frame('workflow_stopped', RUN, { reason: 'user_stopped' }),
      run: { phase: 'done', stopReason: 'user_stopped' },
      session: 'idle',
    },
    {
      name: 'asking the author',
      terminal: frame('workflow_stopped', RUN, { reason: 'waiting_user' }),
      run: { phase: 'waiting_user', stopReason: 'waiting_user' },
      session: 'waiting_user',
    },
    {
      name: 'an error',
      terminal: errorFrame(RUN, 'worker_lost'),
      run: { phase: 'error', stopReason: 'error', errorCode: 'worker_lost' },
      session: 'idle',
    },
  ])('$name', ({ terminal, run, session }) => {
    expect(runEndingFromFrame(terminal)).toMatchObject({ run, sessionPhase: session });
  });

  it('is nothing for a frame that does not end a run', () => {
    expect(runEndingFromFrame(frame('done', RUN, {}))).toBeUndefined();
  });
});

describe('outcomeOfRow', () => {
  it('reads how an ended row says the run ended', () => {
    expect(outcomeOfRow({ phase: 'error', stopReason: 'error', errorCode: null })).toEqual({
      terminal: 'error',
      reason: 'internal_error',
    });
    expect(outcomeOfRow({ phase: 'done', stopReason: 'completed', errorCode: null })).toEqual({
      terminal: 'complete',
      reason: 'completed',
    });
    expect(outcomeOfRow({ phase: 'done', stopReason: 'user_stopped', errorCode: null })).toEqual({
      terminal: 'stopped',
      reason: 'user_stopped',
    });
  });
});
