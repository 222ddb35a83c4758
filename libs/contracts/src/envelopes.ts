import { z } from 'zod';
import { ChatMessage, TokenUsage } from './chat.ts';
import { FileOperation } from './context.ts';
import { ERROR_CATALOG, ERROR_CODES, type ErrorCode } from './errors.ts';
import { BodyPartialReason, DraftReason, SseFrame, WorkflowStoppedReason } from './frames.ts';
import { AgentRole, GenerationMode, Phase, UiLanguage } from './roles.ts';
import { Source } from './sources.ts';

/**
 * Bus envelopes. Every body carries `v`; a consumer validates with these schemas and terminates
 * (never redelivers forever) a message that does not parse.
 */
const v1 = z.literal(1);
const id = z.string().min(1).max(64);
const errorCode = z.enum(ERROR_CODES as [ErrorCode, ...ErrorCode[]]);

export const RunStartEnvelope = z.object({
  v: v1,
  run_id: id,
  session_id: id,
  project_id: id,
  user_id: id,
  message_id: id,
  message: z.string(),
  focus_file_id: id.nullable(),
  attached_file_ids: z.array(id),
  generation_mode: GenerationMode,
  ui_language: UiLanguage,
  created_at: z.string(),
});
export type RunStartEnvelope = z.infer<typeof RunStartEnvelope>;

export const TaskEnvelope = z.object({
  v: v1,
  run_id: id,
  session_id: id,
  project_id: id,
  user_id: id,
  step: z.number().int().nonnegative(),
  role: AgentRole,
  epoch: z.number().int().nonnegative(),
  generation_mode: GenerationMode,
  // Dispatch by reference (docs/decisions/0033-dispatch-by-reference.md): the worker asks
  // `context.compile` for this step itself with these fields and the ids above; the compiled
  // prompt travels from the context service to the worker once, never through the router or
  // this stream.
  context: z.object({
    message: z.string(),
    focus_file_id: id.nullable(),
    attached_file_ids: z.array(id),
    ui_language: UiLanguage,
  }),
  directive: z.string().optional(),
  // Seed 000 「只读请求不改文件」 / 「笼统要求先问清楚」: write tools refuse, explicit handoffs are dropped.
  read_only: z.boolean().optional(),
  clarify_first: z.boolean().optional(),
  // Seed 000 CHAT_HOLD: chat text after the first body write is returned as held_text, not streamed;
  // the router releases it unchanged or discards it when the draft really goes to review.
  hold_chat: z.boolean().optional(),
  // The language the author writes this turn in: chat text shaping hides English process
  // narration next to tool calls from a Chinese-writing author (docs/agent-behaviour.md).
  author_language: UiLanguage.optional(),
});
export type TaskEnvelope = z.infer<typeof TaskEnvelope>;

/**
 * After a run ended, the files its round created and never wrote that must not stay (a refunded
 * round that was stopped or failed, a read-only request): a writer removes each one still empty
 * at version 0 (docs/decisions/0022-two-writer-tables-and-their-guards.md). Published by the
 * router on `task.writer.<id>.blank_files`; durable on TASKS, so it is done when no worker
 * holds the run any more, or none is up yet.
 */
export const BlankFilesTask = z.object({
  v: v1,
  kind: z.literal('blank_files'),
  run_id: id,
  project_id: id,
  file_ids: z.array(id).min(1),
  reason: z.enum(['refunded_round', 'read_only']),
});
export type BlankFilesTask = z.infer<typeof BlankFilesTask>;

/** What a role's task consumer receives: a step, or (writers) the blank files of an ended run. */
export const RoleTaskMessage = z.union([TaskEnvelope, BlankFilesTask]);
export type RoleTaskMessage = z.infer<typeof RoleTaskMessage>;

export const FileWrite = z.object({
  file_id: id,
  title: z.string(),
  file_type: z.string(),
  version: z.number().int(),
  body_chars: z.number().int().nonnegative(),
  // A body that went to a draft next to its target (docs/ai-writes.md), and an incomplete one.
  draft_of: z.object({ file_id: id, title: z.string() }).optional(),
  draft_reason: DraftReason.optional(),
  partial_reason: BodyPartialReason.optional(),
});
export type FileWrite = z.infer<typeof FileWrite>;

export const StepOutcome = z.enum(['completed', 'stopped', 'failed']);
export type StepOutcome = z.infer<typeof StepOutcome>;

/** What a worker reports for one dispatched step; the router's state is a fold over these. */
export const StepResult = z.object({
  step: z.number().int().nonnegative(),
  role: AgentRole,
  worker_instance: z.string(),
  outcome: StepOutcome,
  stop_reason: z.string(),
  final_text: z.string(),
  files_written: z.array(FileWrite),
  // Created / edited / deleted / read-in-full files, for the next turn's breadcrumbs.
  file_operations: z.array(FileOperation).optional(),
  error_code: errorCode.optional(),
  // Produced by the handoff_to_agent / request_clarification tools; the router decides what happens.
  handoff: z.object({ to_agent: AgentRole, reason: z.string() }).optional(),
  clarification: z.object({ question: z.string() }).optional(),
  // Questions for the author the step recorded with note_question_for_author (typed, not from prose).
  author_questions: z.array(z.string()).optional(),
  // Workflow evidence: the held chat suffix of final_text (hold_chat tasks) and
  // whether the step's last reply ended right after a completed, saved <file> block.
  held_text: z.string().optional(),
  ended_on_file_block: z.boolean().optional(),
  // What the step's tools read (docs/protocol.md, sources), de-duplicated; the run's `done` merges them.
  sources: z.array(Source).optional(),
  model_calls: z.number().int().nonnegative(),
  tool_calls: z.number().int().nonnegative(),
});
export type StepResult = z.infer<typeof StepResult>;

export const StepRecordEnvelope = z.discriminatedUnion('kind', [
  z.object({ v: v1, kind: z.literal('dispatched'), run_id: id, step: z.number().int(), role: AgentRole }),
  z.object({ v: v1, kind: z.literal('result'), run_id: id, result: StepResult }),
]);
export type StepRecordEnvelope = z.infer<typeof StepRecordEnvelope>;

export const EventEnvelope = z.object({ v: v1, frame: SseFrame });
export type EventEnvelope = z.infer<typeof EventEnvelope>;

/**
 * A run's stored frames and step records with their stream sequences, as billing read them to
 * settle: the settlement's reply hands them to the router, which archives them with the frames it
 * stores after the settlement (docs/decisions/0066-the-archive-from-the-settlements-read.md)
 * instead of reading the run a second time.
 */
export const SettledRunRecord = z.object({
  frames: z.array(z.object({ seq: z.number().int().positive(), frame: SseFrame })),
  steps: z.array(z.object({ seq: z.number().int().positive(), record: StepRecordEnvelope })),
});
export type SettledRunRecord = z.infer<typeof SettledRunRecord>;

/**
 * The largest record a settlement's reply carries, encoded (far below NATS's 1 MB payload
 * limit); a longer run's record is left out and the router reads it itself.
 */
export const SETTLED_RECORD_MAX_BYTES = 256 * 1024;

export const UsageEnvelope = z.object({
  v: v1,
  run_id: id,
  user_id: id,
  call_index: z.number().int().nonnegative(),
  attempt: z.number().int().nonnegative(),
  role: z.string(),
  provider: z.string(),
  model: z.string(),
  usage: TokenUsage,
});
export type UsageEnvelope = z.infer<typeof UsageEnvelope>;

export const ControlEnvelope = z.object({
  v: v1,
  run_id: id,
  action: z.literal('stop'),
  reason: WorkflowStoppedReason,
});
export type ControlEnvelope = z.infer<typeof ControlEnvelope>;

/** On `gateway.api_keys.revoked`: the key's row is revoked; every gateway forgets the key. */
export const ApiKeyRevokedEnvelope = z.object({ v: v1, key_id: id });
export type ApiKeyRevokedEnvelope = z.infer<typeof ApiKeyRevokedEnvelope>;

// Request/reply services. Replies are either ok or carry a catalog code.
export const ReplyError = z.object({ v: v1, ok: z.literal(false), code: errorCode });
export type ReplyError = z.infer<typeof ReplyError>;

/**
 * A reply in which the replica failed rather than refused (its handler threw, a dependency was
 * down: a retryable code). Another attempt, maybe on another replica, may succeed; a refusal
 * (`quota_exhausted`, `not_found`) is the answer.
 */
export function isReplicaFailure(reply: { ok: boolean; code?: ErrorCode }): boolean {
  return !reply.ok && reply.code !== undefined && ERROR_CATALOG[reply.code].retryable;
}

export const ContextCompileRequest = z.object({
  v: v1,
  run_id: id,
  session_id: id,
  project_id: id,
  user_id: id,
  role: AgentRole,
  message: z.string(),
  focus_file_id: id.nullable(),
  attached_file_ids: z.array(id),
  ui_language: UiLanguage,
  // The step being dispatched: the Context Trace is stored per run, role and step.
  step: z.number().int().nonnegative().optional(),
  // A redelivered step asks for the context its first delivery ran with (stored with the
  // step's Context Trace), so the step journal continues the same prompt.
  reuse: z.boolean().optional(),
});
export type ContextCompileRequest = z.infer<typeof ContextCompileRequest>;

export const ContextCompileReply = z.discriminatedUnion('ok', [
  z.object({
    v: v1,
    ok: z.literal(true),
    messages: z.array(ChatMessage),
    // Whether the session's history has ever been compacted (a compaction row exists after this
    // compile). False tells the worker its session has no history-archive section to write, so
    // it skips that read; absent (a reused prompt, an older replica) means not known.
    compacted: z.boolean().optional(),
  }),
  ReplyError,
]);
export type ContextCompileReply = z.infer<typeof ContextCompileReply>;

export const BillingReserveRequest = z.object({ v: v1, run_id: id, user_id: id });
export type BillingReserveRequest = z.infer<typeof BillingReserveRequest>;
export const BillingReserveReply = z.discriminatedUnion('ok', [
  z.object({ v: v1, ok: z.literal(true), credits_left: z.number().int() }),
  ReplyError,
]);
export type BillingReserveReply = z.infer<typeof BillingReserveReply>;

export const RunOutcome = z.object({
  terminal: z.enum(['complete', 'stopped', 'error']),
  reason: z.string(),
});
export type RunOutcome = z.infer<typeof RunOutcome>;

export const BillingSettleRequest = z.object({
  v: v1,
  run_id: id,
  user_id: id,
  outcome: RunOutcome,
  // When the run was launched (its start envelope's `created_at`): billing reads the run's record
  // from shortly before, not from the stream's first message, and checks the read began with the
  // run's first frame (docs/decisions/0075). Absent: read from the stream's start.
  launched_at: z.iso.datetime({ offset: true }).optional(),
  // The sequence of the run's `run_started`, as the router found it when it took the run: the read
  // starts there, no search by time (docs/decisions/0077). `launched_at` is the fallback.
  started_seq: z.number().int().positive().optional(),
});
export type BillingSettleRequest = z.infer<typeof BillingSettleRequest>;
export const BillingDecision = z.enum(['charge', 'refund']);
export type BillingDecision = z.infer<typeof BillingDecision>;
export const BillingSettleReply = z.discriminatedUnion('ok', [
  z.object({
    v: v1,
    ok: z.literal(true),
    decision: BillingDecision,
    reason: z.string(),
    credits_refunded: z.number().int().nonnegative(),
    duplicate: z.boolean(),
    // The run's record as this settlement read it, when it fits SETTLED_RECORD_MAX_BYTES.
    record: SettledRunRecord.optional(),
  }),
  ReplyError,
]);
export type BillingSettleReply = z.infer<typeof BillingSettleReply>;

export const BillingBalanceRequest = z.object({ v: v1, user_id: id });
export const BillingBalanceReply = z.discriminatedUnion('ok', [
  z.object({ v: v1, ok: z.literal(true), credits: z.number().int() }),
  ReplyError,
]);

export const HealthReply = z.object({ v: v1, service: z.string(), instance: z.string(), ok: z.boolean() });

/**
 * Gateway → router (`router.runs.open`): admit a run, `idle` until a router takes it from the
 * queue. The router owns `runs` (docs/architecture.md "What each service owns").
 */
export const RunOpenRequest = z.object({
  v: v1,
  run_id: id,
  session_id: id,
  project_id: id,
  user_id: id,
  generation_mode: GenerationMode,
  api_key_id: id.nullable(),
});
export type RunOpenRequest = z.infer<typeof RunOpenRequest>;
export const RunOpenReply = z.discriminatedUnion('ok', [
  z.object({ v: v1, ok: z.literal(true), phase: Phase }),
  ReplyError,
]);
export type RunOpenReply = z.infer<typeof RunOpenReply>;

/**
 * Gateway → router (`router.runs.end`): a run the gateway gave up on. `launch_failed` undoes an
 * admission (`reserved: false` removes the never-started row), `worker_lost` is the last resort
 * after the gateway sent the terminal frame itself.
 */
export const RunEndRequest = z.object({
  v: v1,
  run_id: id,
  reason: z.enum(['launch_failed', 'worker_lost']),
  reserved: z.boolean(),
});
export type RunEndRequest = z.infer<typeof RunEndRequest>;
export const RunEndReply = z.discriminatedUnion('ok', [
  z.object({
    v: v1,
    ok: z.literal(true),
    result: z.enum(['applied', 'unchanged', 'illegal', 'missing', 'discarded']),
  }),
  ReplyError,
]);
export type RunEndReply = z.infer<typeof RunEndReply>;

/**
 * Gateway → router (`router.sessions.reviewed`): the author decided on an artifact of this
 * session; a session resting `waiting_user` for acceptance alone goes back to `done` once nothing
 * is left open (docs/kernel.md "Artifacts and acceptance").
 */
export const SessionReviewedRequest = z.object({ v: v1, session_id: id });
export type SessionReviewedRequest = z.infer<typeof SessionReviewedRequest>;
export const SessionReviewedReply = z.discriminatedUnion('ok', [
  z.object({ v: v1, ok: z.literal(true), result: z.enum(['applied', 'unchanged', 'illegal', 'missing']) }),
  ReplyError,
]);
export type SessionReviewedReply = z.infer<typeof SessionReviewedReply>;

/** Gateway → billing (`billing.grant`): an admin's grant of credits; billing alone moves credits. */
export const BillingGrantRequest = z.object({
  v: v1,
  /** Chosen by the gateway per admin request: a retried grant adds nothing twice. */
  grant_id: z.string().uuid(),
  user_id: id,
  credits: z.number().int().positive(),
  granted_by: id,
});
export type BillingGrantRequest = z.infer<typeof BillingGrantRequest>;
export const BillingGrantReply = z.discriminatedUnion('ok', [
  z.object({ v: v1, ok: z.literal(true), credits: z.number().int() }),
  // not_found: no such user; invalid_request: the balance would overflow.
  ReplyError,
]);
export type BillingGrantReply = z.infer<typeof BillingGrantReply>;
