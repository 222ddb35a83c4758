import type { AgentRole } from '@quill/contracts';
import type { Pool } from 'pg';
import type { z } from 'zod';

/** The empty file a `create_file` opened; its body arrives in the next reply as `<file>…</file>`. */
export interface PendingFile {
  fileId: string;
  title: string;
  fileType: string;
}

/** Per-step state the tools share with the worker loop. */
export interface ToolRunState {
  pendingFile: PendingFile | undefined;
}

export interface ToolContext {
  readonly pool: Pool;
  readonly runId: string;
  readonly epoch: number;
  readonly projectId: string;
  readonly userId: string;
  readonly role: AgentRole;
  readonly state: ToolRunState;
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
