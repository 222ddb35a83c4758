import { errorMessage } from './error-messages.ts';
import type { UiLanguage } from './roles.ts';

/**
 * The one error catalog. Every code has a fixed author-facing message (details go to logs with
 * the trace id, never to a client), an HTTP status when it can surface from the API, and the
 * retryable / refundable flags that the `error` frame and billing settlement read.
 */
export interface ErrorSpec {
  readonly http: number;
  readonly message: string;
  readonly retryable: boolean;
  readonly refundable: boolean;
  /**
   * The failure is Quill's own infrastructure (its database, bus, workers or code), not the
   * author's request, the model provider or the run's own conduct: billing refunds such a run
   * whatever it produced (README "Fault tolerance", which failures charge).
   */
  readonly infrastructure: boolean;
}

const spec = (
  http: number,
  message: string,
  retryable = false,
  refundable = true,
  infrastructure = false,
): ErrorSpec => ({ http, message, retryable, refundable, infrastructure });

export const ERROR_CATALOG = {
  // Request errors (HTTP only).
  invalid_request: spec(400, 'The request is invalid.'),
  unauthorized: spec(401, 'Authentication is required.'),
  forbidden: spec(403, 'You do not have permission to do that in this project.'),
  not_found: spec(404, 'Not found.'),
  session_busy: spec(409, 'This session already has a run in progress.', true),
  no_active_run: spec(409, 'This session has no run in progress.'),
  // Optimistic concurrency on the author's file saves (expected_version is not the current one),
  // and a stale structured-state commit that could not be merged (the body then carries
  // `current`, docs/kernel.md "Commits with rev").
  version_conflict: spec(409, 'The file changed since you opened it; reload it and try again.'),
  // Undo / restore / branch switch over changes made since (docs/kernel.md "Snapshots and undo").
  restore_conflict: spec(
    409,
    'Some files changed since then; restoring would undo those changes. Review them or restore with force.',
  ),
  // Artifacts (docs/kernel.md "Artifacts and acceptance").
  artifact_not_open: spec(409, 'This AI draft was already accepted or rejected.'),
  // Members and accounts (README "HTTP API").
  member_exists: spec(409, 'That person is already a member of this project.'),
  email_taken: spec(409, 'An account with this e-mail address already exists.'),
  payload_too_large: spec(413, 'The request body is too large.'),
  // Framework-level refusals (the HTTP edge): same body as every other error, never the input.
  method_not_allowed: spec(405, 'This method is not allowed on this path; see the allow header.'),
  uri_too_long: spec(414, 'The request URL is too long.'),
  unsupported_media_type: spec(415, 'This content type is not accepted here; send application/json.'),
  headers_too_large: spec(431, 'The request headers are too large.'),
  rate_limited: spec(429, 'Too many requests; slow down and retry shortly.', true),
  too_many_active_runs: spec(429, 'You already have the maximum number of runs in progress.', true),
  steer_queue_full: spec(429, 'Too many pending interjections for this run.', true),
  quota_exhausted: spec(402, 'Your AI writing credits are used up.'),
  cost_cap_reached: spec(402, 'Your daily usage cap has been reached.'),
  service_unavailable: spec(503, 'The service is temporarily unavailable; please retry.', true, true, true),
  internal_error: spec(500, 'Something went wrong on our side; please retry.', true, true, true),
  // Run errors (the `error` frame). A refundable error refunds the reserved credit when the run
  // produced no substantive output (billing rules, docs/agent-behaviour.md 「流的终止、停止与计费」).
  model_error: spec(502, 'The writing model failed to answer; please retry.', true),
  model_unavailable: spec(503, 'The writing model is unavailable right now; please retry later.', true),
  context_unavailable: spec(503, 'Could not prepare the project context; please retry.', true, true, true),
  invalid_bus_message: spec(500, 'An internal message was malformed; the run was ended.', true, true, true),
  worker_lost: spec(503, 'The worker running this step stopped responding; please retry.', true, true, true),
  run_timeout: spec(504, 'The run took too long and was ended.', true),
  // The project database stayed unreachable longer than a write may wait (docs/ai-writes.md).
  storage_unavailable: spec(
    503,
    'Your project could not be saved to right now; please retry.',
    true,
    true,
    true,
  ),
  // A created file stayed empty through its correction round; it was removed (docs/ai-writes.md).
  empty_file_unwritten: spec(
    502,
    'The agent created a file but did not write its text; the empty file was removed. Please retry.',
    true,
  ),
  tool_failure_circuit_open: spec(
    500,
    'A tool kept failing, so the run was ended to avoid wasting credits.',
    false,
    false,
  ),
} as const satisfies Record<string, ErrorSpec>;

export type ErrorCode = keyof typeof ERROR_CATALOG;
export const ERROR_CODES = Object.keys(ERROR_CATALOG) as ErrorCode[];

/** An error that carries its catalog code; the edge maps it to HTTP or an `error` frame. */
export class QuillError extends Error {
  readonly code: ErrorCode;
  readonly details: Record<string, unknown> | undefined;
  constructor(code: ErrorCode, options: { cause?: unknown; details?: Record<string, unknown> } = {}) {
    super(ERROR_CATALOG[code].message, { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    this.details = options.details;
  }
  get spec(): ErrorSpec {
    return ERROR_CATALOG[this.code];
  }
}

export function isErrorCode(value: string): value is ErrorCode {
  return Object.hasOwn(ERROR_CATALOG, value);
}

/**
 * The JSON body every HTTP error response carries; `message` in the requester's language
 * (error-messages.ts), the code the same in every language.
 */
export function errorBody(code: ErrorCode, fields?: Record<string, string[]>, language: UiLanguage = 'en') {
  const { retryable } = ERROR_CATALOG[code];
  const message = errorMessage(code, language);
  return fields ? { error: { code, message, retryable, fields } } : { error: { code, message, retryable } };
}
