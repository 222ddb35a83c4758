import type { AgentRole } from '@quill/contracts';
import { z } from 'zod';
import { createFileTool } from './create-file.ts';
import { queryFilesTool } from './query-files.ts';
import { failure, type ToolContext, type ToolDefinition, type ToolResult, type ToolSpec } from './types.ts';

/** The one place where tool schemas, handlers and per-role tool sets are wired (seed 000 「工具」). */
export const TOOL_SPECS: Record<string, ToolSpec> = {
  [createFileTool.name]: createFileTool as unknown as ToolSpec,
  [queryFilesTool.name]: queryFilesTool as unknown as ToolSpec,
};

export const DEFAULT_TOOL_NAMES = ['create_file', 'query_files'] as const;
export const QUALITY_REVIEWER_TOOL_NAMES = ['query_files'] as const;
export const FILE_WRITE_TOOL_NAMES = Object.values(TOOL_SPECS)
  .filter((spec) => spec.writesFiles)
  .map((spec) => spec.name);

export function toolNamesForRole(role: AgentRole): readonly string[] {
  return role === 'quality_reviewer' ? QUALITY_REVIEWER_TOOL_NAMES : DEFAULT_TOOL_NAMES;
}

export function toolDefinitionsForRole(role: AgentRole): ToolDefinition[] {
  return toolNamesForRole(role).map((name) => {
    const spec = TOOL_SPECS[name]!;
    const { $schema: _schema, ...parameters } = z.toJSONSchema(spec.parameters) as Record<string, unknown>;
    return { type: 'function', function: { name, description: spec.description, parameters } };
  });
}

/**
 * Runs one tool call. Never throws: unknown tools, bad JSON, invalid arguments and handler
 * failures all come back as readable results the model can correct itself from.
 */
export async function executeTool(
  name: string,
  rawArguments: string,
  context: ToolContext,
  onUnexpected?: (error: unknown) => void,
): Promise<ToolResult> {
  const spec = toolNamesForRole(context.role).includes(name) ? TOOL_SPECS[name] : undefined;
  if (!spec) return failure('tool_not_found', `Tool “${name}” is not available to ${context.role}.`);
  let parsedJson: unknown;
  try {
    parsedJson = rawArguments.trim() ? JSON.parse(rawArguments) : {};
  } catch {
    return failure('invalid_arguments', 'Tool arguments must be a JSON object.');
  }
  const parsed = spec.parameters.safeParse(parsedJson);
  if (!parsed.success) {
    const detail = parsed.error.issues.map(
      (issue) => `${issue.path.join('.') || 'arguments'}: ${issue.message}`,
    );
    return failure('invalid_arguments', `Invalid arguments: ${detail.join('; ')}`);
  }
  try {
    return await spec.handle(parsed.data, context);
  } catch (error) {
    if (error instanceof Error && error.name === 'RunFencedError') {
      return failure('run_not_active', 'This run is no longer active; nothing was changed.');
    }
    // The detail goes to the log; the model (and the author's tool card) get a fixed text.
    onUnexpected?.(error);
    return failure('tool_error', 'The tool failed unexpectedly; nothing was changed by this call.');
  }
}
