import type { AgentRole } from '@quill/contracts';
import { DEFAULT_WRITE_RETRY_MS, isTransientDbError, retryTransient } from '@quill/db';
import { z } from 'zod';
import { handoffToAgentTool, noteQuestionForAuthorTool, requestClarificationTool } from './control-tools.ts';
import { createFileTool } from './create-file.ts';
import { deleteFileTool } from './delete-file.ts';
import { editFileTool } from './edit-file.ts';
import { loadSkillTool } from './load-skill.ts';
import { createParallelExecuteTool } from './parallel-execute.ts';
import { queryFilesTool } from './query-files.ts';
import { readSkillResourceTool } from './read-skill-resource.ts';
import { renameFileTool } from './rename-file.ts';
import { failure, type ToolContext, type ToolDefinition, type ToolResult, type ToolSpec } from './types.ts';
import { updateProjectTool } from './update-project.ts';

const parallelExecuteTool = createParallelExecuteTool({
  execute: (name, rawArguments, context) => executeTool(name, rawArguments, context),
  allowed: (name, context) => TOOL_SPECS[name]?.parallelSafe === true && toolNamesOf(context).includes(name),
});

/** The one place where tool schemas, handlers and per-role tool sets are wired (docs/agent-behaviour.md 「工具」). */
export const TOOL_SPECS: Record<string, ToolSpec> = {
  [createFileTool.name]: createFileTool as unknown as ToolSpec,
  [editFileTool.name]: editFileTool as unknown as ToolSpec,
  [deleteFileTool.name]: deleteFileTool as unknown as ToolSpec,
  [renameFileTool.name]: renameFileTool as unknown as ToolSpec,
  [queryFilesTool.name]: queryFilesTool as unknown as ToolSpec,
  [updateProjectTool.name]: updateProjectTool as unknown as ToolSpec,
  [handoffToAgentTool.name]: handoffToAgentTool as unknown as ToolSpec,
  [requestClarificationTool.name]: requestClarificationTool as unknown as ToolSpec,
  [noteQuestionForAuthorTool.name]: noteQuestionForAuthorTool as unknown as ToolSpec,
  [parallelExecuteTool.name]: parallelExecuteTool as unknown as ToolSpec,
  [loadSkillTool.name]: loadSkillTool as unknown as ToolSpec,
  [readSkillResourceTool.name]: readSkillResourceTool as unknown as ToolSpec,
};

/**
 * Slots for the skills tools (L2 / L3 of a skill). They join both role sets as soon as their
 * specs are registered in TOOL_SPECS above; until then they are simply not offered.
 */
export const SKILL_TOOL_NAMES = ['load_skill', 'read_skill_resource'] as const;
const registeredSkillTools = (): string[] => SKILL_TOOL_NAMES.filter((name) => name in TOOL_SPECS);

/** planner / hook_designer / writer. */
export const DEFAULT_TOOL_NAMES: readonly string[] = [
  'create_file',
  'edit_file',
  'delete_file',
  'rename_file',
  'query_files',
  'update_project',
  'handoff_to_agent',
  'request_clarification',
  'note_question_for_author',
  'parallel_execute',
  ...registeredSkillTools(),
];
/** quality_reviewer: reads and reports, hands back for revisions; no file-writing tool. */
export const QUALITY_REVIEWER_TOOL_NAMES: readonly string[] = [
  'query_files',
  'handoff_to_agent',
  'request_clarification',
  'parallel_execute',
  ...registeredSkillTools(),
];
/** Tools that change project files: refused on read-only / clarify-first requests, fenced, billed. */
export const FILE_WRITE_TOOL_NAMES = Object.values(TOOL_SPECS)
  .filter((spec) => spec.writesFiles)
  .map((spec) => spec.name);

export function toolNamesForRole(role: AgentRole): readonly string[] {
  return role === 'quality_reviewer' ? QUALITY_REVIEWER_TOOL_NAMES : DEFAULT_TOOL_NAMES;
}

/** The tools a call may use: its step's set (the pinned role definition's, docs/kernel.md), else the role's. */
function toolNamesOf(context: ToolContext): readonly string[] {
  return context.toolNames ?? toolNamesForRole(context.role);
}

// Converting the zod schemas costs milliseconds, and every step of every run asks for its list;
// keyed by the names, since a pinned list is a fresh array each step (few distinct lists exist).
const definitionsByList = new Map<string, readonly ToolDefinition[]>();

export function toolDefinitionsForRole(role: AgentRole): readonly ToolDefinition[] {
  return toolDefinitionsFor(toolNamesForRole(role));
}

/** The definitions of the named tools this build has, in the given order. */
export function toolDefinitionsFor(names: readonly string[]): readonly ToolDefinition[] {
  const key = names.join(',');
  let definitions = definitionsByList.get(key);
  if (!definitions) {
    definitions = Object.freeze(
      names
        .filter((name) => name in TOOL_SPECS)
        .map((name): ToolDefinition => {
          const spec = TOOL_SPECS[name]!;
          const { $schema: _schema, ...parameters } = z.toJSONSchema(spec.parameters) as Record<
            string,
            unknown
          >;
          return { type: 'function', function: { name, description: spec.description, parameters } };
        }),
    );
    definitionsByList.set(key, definitions);
  }
  return definitions;
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
  const spec = toolNamesOf(context).includes(name) ? TOOL_SPECS[name] : undefined;
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
    // A transient database fault is retried for the whole call (reads and the fenced write are
    // redone in fresh transactions; writes carry the call's idempotency key).
    return await retryTransient(() => spec.handle(parsed.data, context), {
      maxMs: context.writeRetryMs ?? DEFAULT_WRITE_RETRY_MS,
    });
  } catch (error) {
    if (error instanceof Error && error.name === 'RunFencedError') {
      return failure('run_not_active', 'This run is no longer active; nothing was changed.');
    }
    // The database stayed unreachable through the fence's retries: a platform fault the model
    // cannot work around, so the step fails (and is refunded) rather than the model being told.
    if (isTransientDbError(error)) throw error;
    // The detail goes to the log; the model (and the author's tool card) get a fixed text.
    onUnexpected?.(error);
    return failure('tool_error', 'The tool failed unexpectedly; nothing was changed by this call.');
  }
}
