export { type AuthorEdits, authorEditsSinceAi, touchesAuthorEdits } from './author-changes.ts';
export { unclassifiedWriteTools } from './billing-output.ts';
export { handoffToAgentTool, noteQuestionForAuthorTool, requestClarificationTool } from './control-tools.ts';
export { createFileTool, FILE_TYPES } from './create-file.ts';
export { deleteFileTool } from './delete-file.ts';
export { editFileTool } from './edit-file.ts';
export { MAX_READ_CHARS } from './file-ranges.ts';
export { type DiffHunk, diffLines } from './line-diff.ts';
export { loadSkillTool } from './load-skill.ts';
export { PARALLEL_CONCURRENCY } from './parallel-execute.ts';
export { CONFIRMED_MARKER, NOTES_MAX_CHARS, PROPOSED_MARKER, parseNotes } from './project-notes.ts';
export { queryFilesTool } from './query-files.ts';
export { readSkillResourceTool } from './read-skill-resource.ts';
export {
  DEFAULT_TOOL_NAMES,
  executeTool,
  FILE_WRITE_TOOL_NAMES,
  QUALITY_REVIEWER_TOOL_NAMES,
  SKILL_TOOL_NAMES,
  TOOL_SPECS,
  toolDefinitionsForRole,
  toolNamesForRole,
} from './registry.ts';
export { renameFileTool } from './rename-file.ts';
export { DEFAULT_SKILL_TOKEN_BUDGET } from './skill-budget.ts';
export { type BoardTask, mentionsUnit, parseUnits } from './task-board.ts';
export type {
  PendingFile,
  ReadSnapshot,
  ToolContext,
  ToolDefinition,
  ToolProgress,
  ToolResult,
  ToolRunState,
  ToolSpec,
} from './types.ts';
export { createToolRunState, promoteReads, recordOwnWrite } from './types.ts';
export { updateProjectTool } from './update-project.ts';
export { visibleToRole } from './visibility.ts';
