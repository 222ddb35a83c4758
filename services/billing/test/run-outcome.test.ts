import { describe, expect, it } from 'vitest';
import { outcomeOfRow } from '../src/run-outcome.ts';

describe('outcomeOfRow', () => {
  it('reads how an ended row says the run ended', () => {
    expect(outcomeOfRow({ phase: 'error', stopReason: 'error', errorCode: null })).toEqual({
      terminal: 'error',
      reason: 'internal_error',
    });
    expect(outcomeOfRow({ phase: 'error', stopReason: 'error', errorCode: 'worker_lost' })).toEqual({
      terminal: 'error',
      reason: 'worker_lost',
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
