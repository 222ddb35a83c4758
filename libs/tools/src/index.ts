export { createFileTool, FILE_TYPES } from './create-file.ts';
export { queryFilesTool } from './query-files.ts';
export {
  DEFAULT_TOOL_NAMES,
  executeTool,
  FILE_WRITE_TOOL_NAMES,
  QUALITY_REVIEWER_TOOL_NAMES,
  TOOL_SPECS,
  toolDefinitionsForRole,
  toolNamesForRole,
} from './registry.ts';
export type {
  PendingFile,
  ToolContext,
  ToolDefinition,
  ToolResult,
  ToolRunState,
  ToolSpec,
} from './types.ts';
