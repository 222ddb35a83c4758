import { z } from 'zod';
import { ERROR_CODES } from './errors.ts';
import { GenerationMode, UiLanguage } from './roles.ts';
import { int4, storableText } from './text.ts';

/** HTTP bodies (gateway). zod errors become 400 with the offending fields named. */
export const MAX_MESSAGE_CHARS = 20_000;

export const AgentStreamBody = z.strictObject({
  project_id: z.uuid(),
  session_id: z.uuid().optional(),
  message: storableText().trim().min(1).max(MAX_MESSAGE_CHARS),
  focus_file_id: z.uuid().optional(),
  attached_file_ids: z.array(z.uuid()).max(20).default([]),
  generation_mode: GenerationMode.default('fast'),
  ui_language: UiLanguage.default('zh'),
});
export type AgentStreamBody = z.infer<typeof AgentStreamBody>;

export const RunIdParams = z.object({ runId: z.uuid() });
// A JetStream sequence: the stream's own limit is a uint64, but past 2^53 a JSON number is not exact.
export const LastEventId = z.coerce.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER);
/** The resume header, parsed under its own name so a 400 names it. */
export const LastEventIdHeaders = z.object({ 'last-event-id': LastEventId.optional() });

export const AgentStopBody = z
  .strictObject({ run_id: z.uuid().optional(), session_id: z.uuid().optional() })
  .refine((body) => body.run_id !== undefined || body.session_id !== undefined, {
    message: 'run_id or session_id is required',
    path: ['run_id'],
  });
export type AgentStopBody = z.infer<typeof AgentStopBody>;

export const MAX_STEER_CHARS = 4_000;
export const AgentSteerBody = z.strictObject({
  session_id: z.uuid(),
  message: storableText().trim().min(1).max(MAX_STEER_CHARS),
});
export type AgentSteerBody = z.infer<typeof AgentSteerBody>;

export const SessionIdParams = z.object({ sessionId: z.uuid() });

export const TokenRequestBody = z.strictObject({ api_key: storableText().min(8).max(200) });

// Quota and usage. Credits are whole units; one run reserves one.
export const MAX_CREDIT_GRANT = 1_000_000;
export const UserIdParams = z.object({ userId: z.uuid() });
export const GrantCreditsBody = z.strictObject({
  credits: z.number().int().positive().max(MAX_CREDIT_GRANT),
});
export type GrantCreditsBody = z.infer<typeof GrantCreditsBody>;

const TokenTotals = {
  calls: z.number().int().nonnegative(),
  /** Calls whose usage the provider did not report (usage_source = estimate). */
  estimated_calls: z.number().int().nonnegative(),
  prompt_tokens: z.number().int().nonnegative(),
  completion_tokens: z.number().int().nonnegative(),
  total_tokens: z.number().int().nonnegative(),
};
export const UsageTodayResponse = z.object({
  /** The UTC day the totals cover, YYYY-MM-DD. */
  day: z.string(),
  total: z.object(TokenTotals),
  by_model: z.array(z.object({ provider: z.string(), model: z.string(), ...TokenTotals })),
});
export type UsageTodayResponse = z.infer<typeof UsageTodayResponse>;

export const QuotaResponse = z.object({
  credits: z.number().int().nonnegative(),
  /** Tokens per UTC day; null = no cap. */
  daily_token_cap: z.number().int().nonnegative().nullable(),
  used_today_tokens: z.number().int().nonnegative(),
});
export type QuotaResponse = z.infer<typeof QuotaResponse>;

export const GrantCreditsResponse = z.object({
  user_id: z.string(),
  credits: z.number().int().nonnegative(),
});
export type GrantCreditsResponse = z.infer<typeof GrantCreditsResponse>;

// Next-step suggestions (`POST /agent/suggest`, docs/agent-behaviour.md suggest_service): a session narrows them to
// that conversation; without one they are about the project.
export const AgentSuggestBody = z.strictObject({
  project_id: z.uuid(),
  session_id: z.uuid().optional(),
});
export type AgentSuggestBody = z.infer<typeof AgentSuggestBody>;
export const MAX_SUGGESTIONS = 5;
export const AgentSuggestResponse = z.object({ suggestions: z.array(z.string()).max(MAX_SUGGESTIONS) });
export type AgentSuggestResponse = z.infer<typeof AgentSuggestResponse>;

// Project files (the author's editor, docs/). An author save creates an `author` version; a
// stale `expected_version` is 409 version_conflict, never a silent overwrite.
export const MAX_FILE_CHARS = 1_000_000;
const fileTitle = storableText().trim().min(1).max(200);
export const ProjectIdParams = z.object({ projectId: z.uuid() });
export const ProjectFileParams = z.object({ projectId: z.uuid(), fileId: z.uuid() });
/** One version of a file: path segments are strings, so the number is coerced and range-checked. */
export const ProjectFileVersionParams = ProjectFileParams.extend({
  version: z.coerce.number().int().min(0).max(2_147_483_647),
});

export const CreateFileBody = z.strictObject({
  title: fileTitle,
  file_type: storableText()
    .trim()
    .regex(/^[a-z][a-z_]{0,39}$/),
  folder: storableText().trim().max(200).default(''),
  content: storableText().max(MAX_FILE_CHARS).default(''),
});
export type CreateFileBody = z.infer<typeof CreateFileBody>;

export const UpdateFileBody = z.strictObject({
  content: storableText().max(MAX_FILE_CHARS),
  // Versions are int4 columns.
  expected_version: int4().nonnegative(),
  title: fileTitle.optional(),
});
export type UpdateFileBody = z.infer<typeof UpdateFileBody>;

/** A revert is itself a new version carrying the old content. */
export const RevertFileBody = z.strictObject({
  version: int4().min(1),
  expected_version: int4().nonnegative().optional(),
});
export type RevertFileBody = z.infer<typeof RevertFileBody>;

/**
 * Accepting an AI draft (docs/ai-writes.md): its text becomes a new `author` version of the file
 * it was drafted for, if that file is still at `expected_version`; the draft is then deleted.
 */
export const AcceptDraftBody = z.strictObject({
  expected_version: z.number().int().nonnegative().max(2_147_483_647),
});
export type AcceptDraftBody = z.infer<typeof AcceptDraftBody>;

/** The one HTTP error body (README "HTTP API"): a catalog code, its fixed message, the flag. */
/** A 409 `restore_conflict`'s entry: what someone changed that the restore would undo (docs/kernel.md). */
export const RestoreConflictView = z.object({
  file_id: z.uuid().nullable(),
  title: z.string(),
  changed_by: z.enum(['author', 'run', 'restore']),
  run_id: z.uuid().nullable(),
});
export const ErrorResponse = z.strictObject({
  error: z.strictObject({
    code: z.enum(ERROR_CODES as [string, ...string[]]),
    message: z.string(),
    retryable: z.boolean(),
    fields: z.record(z.string(), z.array(z.string())).optional(),
    conflicts: z.array(RestoreConflictView).optional(),
  }),
  /** On a rev conflict (docs/kernel.md "Commits with rev"): the value and rev that stand now. */
  current: z.record(z.string(), z.unknown()).optional(),
  /** On a rev conflict of notes, info or the task board: the lines, keys or tasks both sides changed. */
  conflicts: z.array(z.string()).optional(),
});
export type ErrorResponse = z.infer<typeof ErrorResponse>;
