import { QuillApiError } from '@quill/client';
import { format } from '../format.ts';
import type { Strings } from '../strings-en.ts';

/**
 * A refusal in the author's words: the catalog codes the README lists for each route (409
 * session_busy, 402 quota_exhausted / cost_cap_reached, 429 with retry-after…), never raw JSON.
 */
export function explainError(t: Strings, error: unknown): string {
  if (!(error instanceof QuillApiError)) {
    if (error instanceof TypeError) return t.errorNetwork;
    return format(t.errorGeneric, { message: error instanceof Error ? error.message : String(error) });
  }
  switch (error.code) {
    case 'session_busy':
      return t.errorSessionBusy;
    case 'restore_conflict':
      return format(t.errorRestoreConflict, {
        files: (error.conflicts ?? []).map((conflict) => conflict.title || t.notesLabel).join('、'),
      });
    case 'quota_exhausted':
      return t.errorQuota;
    case 'cost_cap_reached':
      return t.errorCostCap;
    case 'too_many_active_runs':
      return t.errorTooManyRuns;
    case 'steer_queue_full':
      return t.errorSteerQueueFull;
    case 'no_active_run':
      return t.errorNoActiveRun;
    case 'forbidden':
      return t.errorForbidden;
    case 'not_found':
      return t.errorNotFound;
    case 'unauthorized':
      return t.errorSignedOut;
    case 'rate_limited':
      return t.errorRateLimited;
    default:
      if (error.status === 429) return t.errorRateLimited;
      if (error.status === 402) return t.errorQuota;
      return format(t.errorGeneric, { message: error.message });
  }
}
