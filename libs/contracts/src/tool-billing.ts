/**
 * How billing counts each file-writing tool (docs/agent-behaviour.md 「添加工具」 step 4): a tool that leaves
 * author-visible body text must be declared here, or a stopped / failed run that used it would be
 * refunded as if nothing had been produced. Billing reads these lists from the contracts, not from
 * the tool registry: it decides from the run's frames and needs none of the tools' code.
 * libs/tools checks that every registered file-writing tool is in exactly one list.
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
