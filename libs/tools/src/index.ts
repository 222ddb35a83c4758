export {
  executeTool,
  FILE_WRITE_TOOL_NAMES,
  QUALITY_REVIEWER_TOOL_NAMES,
  TOOL_SPECS,
  toolDefinitionsFor,
  toolNamesForRole,
} from './registry.ts';
export type { PendingFile, ToolContext, ToolDefinition, ToolResult, ToolRunState } from './types.ts';
export { createToolRunState, promoteReads, recordOwnWrite } from './types.ts';
