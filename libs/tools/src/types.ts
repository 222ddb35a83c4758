import type { AgentRole, Source } from '@quill/contracts';
import type { Pool } from 'pg';
import type { z } from 'zod';

/** The empty file a `create_file` opened; its body arrives in the next reply as `<file>…</file>`. */
export interface PendingFile {
  fileId: string;
  title: string;
  fileType: string;
  folder?: string;
  /**
   * The version create_file made (0) or reused: the body is saved into the file only while it is
   * still at this version; otherwise it becomes a draft next to it (docs/ai-writes.md).
   */
  baseVersion: number;
}

/** What the model saw of a file: the full text at `version`, and whether it saw all of it. */
export interface ReadSnapshot {
  version: number;
  content: string;
  /** A range read (section / tail / window) is a staleness snapshot, not a read of the full text. */
  full: boolean;
}

/** Per-step state the tools share with the worker loop. */
export interface ToolRunState {
  /** Created (or reused) and its body not written yet: one file streams at a time. */
  pendingFile: PendingFile | undefined;
  /**
   * What the model has seen, per file id. A read enters `pendingReads` and is promoted here when
   * the next model call starts (`promoteReads`): only then has the model actually seen it.
   */
  readSnapshots: Map<string, ReadSnapshot>;
  pendingReads: Map<string, ReadSnapshot>;
  /** Range key → version of reads already served in this step (the repeat-read guard). */
  readLog: Map<string, number>;
  /** Files this step wrote (create, body, edit): the only evidence a task board `done` accepts. */
  writtenFileIds: Set<string>;
  /** Set by handoff_to_agent / request_clarification; the worker ends the step and reports it. */
  handoff: { to_agent: AgentRole; reason: string } | undefined;
  clarification: { question: string } | undefined;
  /** What this step's tools read, collected by the worker loop (mergeSources de-duplicates). */
  sources: Source[];
  /** Questions for the author recorded with note_question_for_author (typed, never parsed from text). */
  authorQuestions: string[];
}

export function createToolRunState(): ToolRunState {
  return {
    pendingFile: undefined,
    readSnapshots: new Map(),
    pendingReads: new Map(),
    readLog: new Map(),
    writtenFileIds: new Set(),
    handoff: undefined,
    clarification: undefined,
    sources: [],
    authorQuestions: [],
  };
}

/** Called when a model call starts: what the tools returned before it is now in its input. */
export function promoteReads(state: ToolRunState): void {
  for (const [fileId, snapshot] of state.pendingReads) state.readSnapshots.set(fileId, snapshot);
  state.pendingReads.clear();
}

/** The model wrote this text itself, so it knows it: later edits compare against it. */
export function recordOwnWrite(state: ToolRunState, fileId: string, version: number, content: string): void {
  const snapshot = { version, content, full: true };
  state.readSnapshots.set(fileId, snapshot);
  state.pendingReads.delete(fileId);
  state.writtenFileIds.add(fileId);
}

/** Progress of a long tool (parallel_execute), sent to the author as `tool_progress` frames. */
export interface ToolProgress {
  completed: number;
  total: number;
  message: string;
}

export interface ToolContext {
  readonly pool: Pool;
  readonly runId: string;
  readonly epoch: number;
  readonly projectId: string;
  readonly userId: string;
  readonly role: AgentRole;
  /** The step's tool set, from its pinned role definition (docs/kernel.md); default the role's. */
  readonly toolNames?: readonly string[];
  readonly state: ToolRunState;
  /** The dispatched step; with `callKey` it makes each write's idempotency key. */
  readonly step?: number;
  /**
   * Unique per tool call within the step (the turn and the call's id), set by the worker: a write
   * retried after an unknown commit outcome, or redone after a takeover, finds its own version.
   */
  readonly callKey?: string;
  /** How long fenced writes retry transient database faults (DATABASE_WRITE_RETRY_MS). */
  readonly writeRetryMs?: number;
  /** Set per call by the worker so a long tool can report progress on its own tool card. */
  readonly reportProgress?: (progress: ToolProgress) => void;
  /** Per-request budget for skill text (AGENT_SKILL_TOKEN_BUDGET); the skill tools default it. */
  readonly skillTokenBudget?: number;
}

/** Tools never throw into the loop (docs/agent-behaviour.md §四): failures are readable results for the model. */
export type ToolResult =
  | { status: 'ok'; summary: string; data: Record<string, unknown>; sources?: Source[] }
  | { status: 'error'; error_type: string; message: string };

export interface ToolSpec<S extends z.ZodType = z.ZodType> {
  readonly name: string;
  readonly description: string;
  readonly parameters: S;
  /** Changes project files: rejected on read-only requests, counted by billing as output. */
  readonly writesFiles: boolean;
  /** Read-only and independent of other calls: may run inside parallel_execute. */
  readonly parallelSafe?: boolean;
  handle(args: z.infer<S>, context: ToolContext): Promise<ToolResult>;
}

/** The provider-neutral (OpenAI function tool) shape sent to the model. */
export interface ToolDefinition {
  type: 'function';
  function: { name: string; description: string; parameters: Record<string, unknown> };
}

/**
 * The write fence of a tool call. It does not retry on its own: executeTool retries the whole
 * call on a transient database fault (its reads too), so there is one retry budget per call.
 */
export function fenceOf(context: ToolContext): { runId: string; epoch: number; retryMs: number } {
  return { runId: context.runId, epoch: context.epoch, retryMs: 0 };
}

/** The idempotency key of a tool call's write, when the worker gave the call one. */
export function writeKeyOf(context: ToolContext): string | undefined {
  return context.callKey ? `${context.runId}:s${context.step ?? 0}:${context.callKey}` : undefined;
}

export const ok = (summary: string, data: Record<string, unknown>): ToolResult => ({
  status: 'ok',
  summary,
  data,
});

/**
 * A result that read project material: the tool names its sources itself, so no prompt has to
 * ask the model to cite (docs/protocol.md, sources).
 */
export const sourced = (summary: string, data: Record<string, unknown>, sources: Source[]): ToolResult => ({
  status: 'ok',
  summary,
  data,
  ...(sources.length > 0 ? { sources } : {}),
});
export const failure = (errorType: string, message: string): ToolResult => ({
  status: 'error',
  error_type: errorType,
  message,
});
