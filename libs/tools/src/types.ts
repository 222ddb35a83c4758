import type { AgentRole } from '@quill/contracts';
import type { Pool } from 'pg';
import type { z } from 'zod';

/** The empty file a `create_file` opened; its body arrives in the next reply as `<file>…</file>`. */
export interface PendingFile {
  fileId: string;
  title: string;
  fileType: string;
  folder?: string;
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
  readonly state: ToolRunState;
  /** Set per call by the worker so a long tool can report progress on its own tool card. */
  readonly reportProgress?: (progress: ToolProgress) => void;
  /** Per-request budget for skill text (AGENT_SKILL_TOKEN_BUDGET); the skill tools default it. */
  readonly skillTokenBudget?: number;
}

/** Tools never throw into the loop (seed 003 §四): failures are readable results for the model. */
export type ToolResult =
  | { status: 'ok'; summary: string; data: Record<string, unknown> }
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

export const ok = (summary: string, data: Record<string, unknown>): ToolResult => ({
  status: 'ok',
  summary,
  data,
});
export const failure = (errorType: string, message: string): ToolResult => ({
  status: 'error',
  error_type: errorType,
  message,
});
