import type { ToolResult } from '@quill/tools';

/**
 * Repeat-read no-progress guard (docs/agent-behaviour.md [no-progress-guard-and-soft-cap]). query_files refuses
 * to serve the same part of an unchanged file twice in a step (`repeated_read`); a model that
 * keeps asking anyway is not making progress, and after `limit` such refusals since its last
 * successful write the step stops with `no_progress` instead of burning the turn budget.
 */
export const REPEATED_READ_LIMIT = 3;

/** The pure rule: refused repeat reads since the last successful write, after one call. */
export function countRepeatedReads(count: number, outcome: ToolResult, writesFiles: boolean): number {
  if (outcome.status === 'ok' && writesFiles) return 0;
  if (outcome.status === 'error' && outcome.error_type === 'repeated_read') return count + 1;
  return count;
}

export interface NoProgressGuard {
  /** Records one call's outcome; true once the step should stop. */
  record(outcome: ToolResult, writesFiles: boolean): boolean;
}

/** The same rule with its count kept in a closure, for callers outside the step machine. */
export function createNoProgressGuard(limit = REPEATED_READ_LIMIT): NoProgressGuard {
  let repeatedReads = 0;
  return {
    record(outcome, writesFiles) {
      repeatedReads = countRepeatedReads(repeatedReads, outcome, writesFiles);
      return repeatedReads >= limit;
    },
  };
}
