import { z } from 'zod';
import { errorMessage } from './error-messages.ts';
import { ERROR_CATALOG, ERROR_CODES, type ErrorCode, isErrorCode } from './errors.ts';
import { AgentRole, GenerationMode, type UiLanguage, WorkflowPlanName } from './roles.ts';
import { Source } from './sources.ts';
import { isoNow } from './time.ts';

/**
 * The SSE contract (docs/agent-behaviour.md §四): frame names and fields exist only here. Additive only: new
 * optional fields are safe, renames are not.
 */
const base = { run_id: z.string().min(1), ts: z.string() };
const agent = AgentRole;

/** workflow_stopped reasons that do not end the stream (docs/agent-behaviour.md: read_only_handoff_blocked). */
export const NON_TERMINAL_WORKFLOW_STOPPED_REASONS = ['read_only_handoff_blocked'] as const;
export const WORKFLOW_STOPPED_REASONS = [
  ...NON_TERMINAL_WORKFLOW_STOPPED_REASONS,
  'user_stopped',
  'client_disconnected',
  'wall_clock_timeout',
  'no_progress',
  'model_call_cap',
  'tool_turns_exhausted',
  'collaboration_cap',
  // The run's prompt + completion tokens reached AGENT_RUN_MAX_TOKENS (docs/agent-behaviour.md 预算).
  'token_budget',
  // Two agents handed the same work back and forth with no file written (docs/agent-behaviour.md 预算).
  'repeated_task',
  // The run asked the author a question (request_clarification) and waits for the answer: the
  // terminal frame after clarification_requested; the run and session rest in phase waiting_user.
  'waiting_user',
] as const;
export const WorkflowStoppedReason = z.enum(WORKFLOW_STOPPED_REASONS);
export type WorkflowStoppedReason = z.infer<typeof WorkflowStoppedReason>;

/**
 * Why a saved body is incomplete (docs/ai-writes.md): the author stopped, the client went away,
 * the wall clock ran out, the output limit cut it with no continuation left, or the provider's
 * stream broke. A partial body only ever fills an empty file; over text it becomes a draft.
 */
export const BODY_PARTIAL_REASONS = [
  'user_stopped',
  'client_disconnected',
  'wall_clock_timeout',
  'output_limit',
  'provider_error',
  'interrupted',
] as const;
export const BodyPartialReason = z.enum(BODY_PARTIAL_REASONS);
export type BodyPartialReason = z.infer<typeof BodyPartialReason>;

/** Why an AI body went to a draft file next to its target instead of into it. */
export const DRAFT_REASONS = ['author_saved', 'file_changed', 'file_deleted', 'partial_over_text'] as const;
export const DraftReason = z.enum(DRAFT_REASONS);
export type DraftReason = z.infer<typeof DraftReason>;

const fileRef = z.object({ file_id: z.string(), title: z.string() });

export const FrameSchemas = {
  run_started: z.object({
    ...base,
    type: z.literal('run_started'),
    session_id: z.string(),
    project_id: z.string(),
    generation_mode: GenerationMode,
  }),
  // The router's decision for this run (docs/agent-behaviour.md 「Router」): which agent starts, the trimmed plan
  // and the author's scope; `source` says whether the model decided or a deterministic rule did.
  routing_decided: z.object({
    ...base,
    type: z.literal('routing_decided'),
    agent,
    workflow_plan: WorkflowPlanName,
    workflow_agents: z.array(AgentRole),
    read_only: z.boolean(),
    write_content: z.boolean().nullable(),
    scope: z.string(),
    source: z.string(),
  }),
  agent_start: z.object({ ...base, type: z.literal('agent_start'), agent, step: z.number().int() }),
  text: z.object({ ...base, type: z.literal('text'), agent, content: z.string() }),
  thinking: z.object({ ...base, type: z.literal('thinking'), agent, content: z.string() }),
  tool_call: z.object({
    ...base,
    type: z.literal('tool_call'),
    agent,
    tool_call_id: z.string(),
    tool_name: z.string(),
    arguments: z.record(z.string(), z.unknown()),
  }),
  tool_result: z.object({
    ...base,
    type: z.literal('tool_result'),
    agent,
    tool_call_id: z.string(),
    tool_name: z.string(),
    status: z.enum(['ok', 'error']),
    error_type: z.string().optional(),
    summary: z.string(),
    // The project material this call read, from the tool itself (docs/protocol.md, sources).
    sources: z.array(Source).optional(),
  }),
  // Progress of a long tool call (parallel_execute) on its card, keyed by tool_call_id (docs/agent-behaviour.md 坑 12).
  tool_progress: z.object({
    ...base,
    type: z.literal('tool_progress'),
    agent,
    tool_call_id: z.string(),
    tool_name: z.string(),
    completed: z.number().int().nonnegative(),
    total: z.number().int().nonnegative(),
    message: z.string(),
  }),
  file_start: z.object({
    ...base,
    type: z.literal('file_start'),
    agent,
    file_id: z.string(),
    title: z.string(),
    file_type: z.string(),
  }),
  file_delta: z.object({ ...base, type: z.literal('file_delta'), file_id: z.string(), content: z.string() }),
  // `file_id` is where the body went: the file itself, or (saved_as: draft) a new draft file
  // linked to `draft_of`, which still holds the author's text.
  file_saved: z.object({
    ...base,
    type: z.literal('file_saved'),
    file_id: z.string(),
    title: z.string(),
    version: z.number().int(),
    chars: z.number().int(),
    saved_as: z.enum(['file', 'draft']).optional(),
    draft_of: fileRef.optional(),
    draft_reason: DraftReason.optional(),
    partial: z.boolean().optional(),
    partial_reason: BodyPartialReason.optional(),
  }),
  // An empty file the agent created and never wrote, removed after its correction round failed.
  file_removed: z.object({
    ...base,
    type: z.literal('file_removed'),
    agent,
    file_id: z.string(),
    title: z.string(),
    reason: z.literal('empty_file_unwritten'),
  }),
  // A step taken over by another worker after the first went away (docs/ai-writes.md): what the
  // step had finished stands and is not sent again; the frames between `valid_through_id` (an SSE
  // id, 0 when nothing of the step stands) and this frame belong to an unfinished model call
  // that is redone, and a client drops them.
  step_resumed: z.object({
    ...base,
    type: z.literal('step_resumed'),
    agent,
    step: z.number().int(),
    resumed_turn: z.number().int().nonnegative(),
    valid_through_id: z.number().int().nonnegative(),
  }),
  handoff: z.object({
    ...base,
    type: z.literal('handoff'),
    from_agent: agent,
    to_agent: agent,
    reason: z.string(),
  }),
  steering_received: z.object({ ...base, type: z.literal('steering_received'), content: z.string() }),
  clarification_requested: z.object({
    ...base,
    type: z.literal('clarification_requested'),
    agent,
    question: z.string(),
  }),
  workflow_stopped: z.object({ ...base, type: z.literal('workflow_stopped'), reason: WorkflowStoppedReason }),
  workflow_complete: z.object({ ...base, type: z.literal('workflow_complete') }),
  message_end: z.object({ ...base, type: z.literal('message_end'), agent, stop_reason: z.string() }),
  error: z.object({
    ...base,
    type: z.literal('error'),
    code: z.enum(ERROR_CODES as [ErrorCode, ...ErrorCode[]]),
    message: z.string(),
    retryable: z.boolean(),
    refundable: z.boolean(),
  }),
  quota_refunded: z.object({ ...base, type: z.literal('quota_refunded'), credits: z.number().int() }),
  // `sources`: every source the run's tools read, de-duplicated (docs/protocol.md, sources).
  done: z.object({ ...base, type: z.literal('done'), sources: z.array(Source).optional() }),
} as const;

export type FrameType = keyof typeof FrameSchemas;
export const FRAME_TYPES = Object.keys(FrameSchemas) as FrameType[];

export const SseFrame = z.discriminatedUnion('type', [
  FrameSchemas.run_started,
  FrameSchemas.routing_decided,
  FrameSchemas.agent_start,
  FrameSchemas.text,
  FrameSchemas.thinking,
  FrameSchemas.tool_call,
  FrameSchemas.tool_result,
  FrameSchemas.tool_progress,
  FrameSchemas.file_start,
  FrameSchemas.file_delta,
  FrameSchemas.file_saved,
  FrameSchemas.file_removed,
  FrameSchemas.step_resumed,
  FrameSchemas.handoff,
  FrameSchemas.steering_received,
  FrameSchemas.clarification_requested,
  FrameSchemas.workflow_stopped,
  FrameSchemas.workflow_complete,
  FrameSchemas.message_end,
  FrameSchemas.error,
  FrameSchemas.quota_refunded,
  FrameSchemas.done,
]);
export type SseFrame = z.infer<typeof SseFrame>;
export type FrameOf<T extends FrameType> = z.infer<(typeof FrameSchemas)[T]>;

/** Builds a frame with its run id and a microsecond timestamp. */
export function frame<T extends FrameType>(
  type: T,
  runId: string,
  fields: Omit<FrameOf<T>, 'type' | 'run_id' | 'ts'>,
): FrameOf<T> {
  return { type, run_id: runId, ts: isoNow(), ...fields } as FrameOf<T>;
}

/**
 * The `error` frame for a catalog code: fixed message (in the author's UI language) and flags,
 * never internal detail.
 */
export function errorFrame(runId: string, code: ErrorCode, language: UiLanguage = 'en'): FrameOf<'error'> {
  const { retryable, refundable } = ERROR_CATALOG[code];
  return frame('error', runId, { code, message: errorMessage(code, language), retryable, refundable });
}

/**
 * A frame as a reader in `language` sees it: an `error` frame's message in that language (the
 * gateway applies it per stream, so fallback terminals sent without knowing the author read
 * right too); every other frame unchanged.
 */
export function localizeFrame<T extends SseFrame>(value: T, language: UiLanguage): T {
  if (value.type !== 'error' || !isErrorCode(value.code)) return value;
  const message = errorMessage(value.code, language);
  return message === value.message ? value : { ...value, message };
}

export function isTerminalFrame(value: SseFrame): boolean {
  if (value.type === 'workflow_complete' || value.type === 'error') return true;
  if (value.type === 'workflow_stopped') {
    return !(NON_TERMINAL_WORKFLOW_STOPPED_REASONS as readonly string[]).includes(value.reason);
  }
  return false;
}

/**
 * SSE wire format: the only place `data:` lines are written. `event:` carries the frame type, so
 * a browser's `EventSource.addEventListener('<type>', …)` fires (the JSON repeats it in `type`).
 * Frame types are fixed identifiers, never input, so they cannot break the line format.
 */
export function encodeSseFrame(value: SseFrame, id?: number | string): string {
  const idLine = id === undefined ? '' : `id: ${id}\n`;
  return `${idLine}event: ${value.type}\ndata: ${JSON.stringify(value)}\n\n`;
}

export function encodeSseComment(text: string): string {
  return `: ${text}\n\n`;
}

/** How long a client waits before it reconnects (the `retry:` field), e.g. before a gateway exits. */
export function encodeSseRetry(milliseconds: number): string {
  return `retry: ${Math.max(0, Math.round(milliseconds))}\n\n`;
}

// 2: every event is named (`event: <type>`), so an EventSource's `onmessage` no longer fires;
// listen per type. The JSON of each frame is unchanged from 1.
export const SSE_PROTOCOL_VERSION = '2';
export const SSE_HEADERS = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache, no-transform',
  connection: 'keep-alive',
  'x-accel-buffering': 'no',
  'x-quill-protocol': SSE_PROTOCOL_VERSION,
} as const;

/**
 * What a client shows of a run's frames, given `step_resumed` (docs/ai-writes.md): on each one,
 * the frames of its step that came after `valid_through_id` are dropped (with 0, the step's
 * frames from its `agent_start` on). `id` is each frame's SSE id (its JetStream sequence).
 */
export function standingFrames<T extends { id: number; frame: SseFrame }>(received: readonly T[]): T[] {
  const kept: T[] = [];
  for (const entry of received) {
    if (entry.frame.type === 'step_resumed') {
      const { valid_through_id: through, step } = entry.frame;
      let from = kept.length;
      if (through > 0) {
        while (from > 0 && kept[from - 1]!.id > through) from--;
      } else {
        const start = kept.findLastIndex(
          (item) => item.frame.type === 'agent_start' && item.frame.step === step,
        );
        if (start !== -1) from = start;
      }
      kept.splice(from);
    }
    kept.push(entry);
  }
  return kept;
}
