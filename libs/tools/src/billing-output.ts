import { TOOL_SPECS } from './registry.ts';

/**
 * How billing counts each file-writing tool (docs/agent-behaviour.md 「添加工具」 step 4): a tool that leaves
 * author-visible body text must be declared here, or a stopped / failed run that used it would be
 * refunded as if nothing had been produced.
 *
 * `WRITE_TOOL_NAMES`: a successful `tool_result` of these leaves body text in a project file, so
 * it is substantive output by itself (edit_file-style tools).
 */
export const WRITE_TOOL_NAMES: readonly string[] = ['edit_file'];

/**
 * File-writing tools that leave no body by themselves. `create_file` only opens an empty file;
 * the body arrives in the next reply and is counted from its `file_saved` frame (chars > 0), so
 * "only created empty files" stays a refundable round. Deleting or renaming writes no body text.
 */
export const NON_OUTPUT_WRITE_TOOL_NAMES: readonly string[] = ['create_file', 'delete_file', 'rename_file'];

/** Registered tools with `writesFiles: true` that neither list classifies (must be empty). */
export function unclassifiedWriteTools(): string[] {
  const classified = new Set([...WRITE_TOOL_NAMES, ...NON_OUTPUT_WRITE_TOOL_NAMES]);
  return Object.values(TOOL_SPECS)
    .filter((spec) => spec.writesFiles && !classified.has(spec.name))
    .map((spec) => spec.name);
}
