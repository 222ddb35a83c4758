import type { ToolResult } from '@quill/tools';

/**
 * Repeat-read no-progress guard (docs/agent-behaviour.md [no-progress-guard-and-soft-cap]). query_files refuses
 * to serve the same part of an unchanged file twice in a step (`repeated_read`); a model that
 * keeps asking anyway is not making progress, and after `limit` such refusals since its last
 * successful write the step stops with `no_progress` instead of burning the turn budget.
 */
export const REPEATED_READ_LIMIT = 3;

export interface NoProgressGuard {
  /** Records one call's outcome; true once the step should stop. */
  record(outcome: ToolResult, writesFiles: boolean): boolean;
}

export function createNoProgressGuard(limit = REPEATED_READ_LIMIT): NoProgressGuard {
  let repeatedReads = 0;
  return {
    record(outcome, writesFiles) {
      if (outcome.status === 'ok' && writesFiles) repeatedReads = 0;
      if (outcome.status === 'error' && outcome.error_type === 'repeated_read') repeatedReads++;
      return repeatedReads >= limit;
    },
  };
}
