import type { AgentRole } from '@quill/contracts';
import {
  FILE_WRITE_TOOL_NAMES,
  type ToolDefinition,
  type ToolResult,
  toolDefinitionsFor,
  toolNamesForRole,
} from '@quill/tools';

/**
 * The request's scope applied to tools (docs/agent-behaviour.md 「只读请求不改文件」 / 「笼统要求先问清楚」): on a
 * read-only request every file-writing tool answers `read_only_request` (parallel_execute too when
 * it asks for one); before a vague request is clarified they answer `clarify_first` and an explicit
 * handoff is dropped. The tools stay in the list, described as unavailable, so the model's tool
 * set (and the cached prompt prefix) does not change shape between requests.
 */
export interface RequestScope {
  readOnly: boolean;
  clarifyFirst: boolean;
}

export interface ToolGate {
  readonly tools: ToolDefinition[];
  /** A refusal for this call, or undefined when it may run. */
  refuse(name: string, rawArguments: string): ToolResult | undefined;
}

/** `names`: the step's tool set, from its pinned role definition (docs/kernel.md); default the role's. */
export function createToolGate(
  role: AgentRole,
  scope: RequestScope,
  names: readonly string[] = toolNamesForRole(role),
): ToolGate {
  const writes = new Set(FILE_WRITE_TOOL_NAMES);
  const unavailable = scope.readOnly
    ? 'read-only request: it will refuse'
    : scope.clarifyFirst
      ? 'the request needs clarifying first: it will refuse'
      : undefined;
  const tools = toolDefinitionsFor(names).map((definition) =>
    unavailable && (writes.has(definition.function.name) || refusesHandoff(definition.function.name, scope))
      ? {
          ...definition,
          function: {
            ...definition.function,
            description: `[Unavailable in this request — ${unavailable}.] ${definition.function.description}`,
          },
        }
      : definition,
  );
  return {
    tools,
    refuse(name, rawArguments) {
      const asksToWrite =
        writes.has(name) || (name === 'parallel_execute' && namesWriteTool(rawArguments, writes));
      if (scope.readOnly && asksToWrite) {
        return refusal(
          'read_only_request',
          'This request is read-only: no project file may be changed. Answer from what you can read.',
        );
      }
      if (scope.clarifyFirst && (asksToWrite || refusesHandoff(name, scope))) {
        return refusal(
          'clarify_first',
          'The author’s request is too vague to act on: ask what exactly to change (request_clarification) before changing files or handing off.',
        );
      }
      return undefined;
    },
  };
}

function refusesHandoff(name: string, scope: RequestScope): boolean {
  return scope.clarifyFirst && name === 'handoff_to_agent';
}

function namesWriteTool(rawArguments: string, writes: ReadonlySet<string>): boolean {
  try {
    const parsed = JSON.parse(rawArguments) as { calls?: Array<{ tool?: unknown }> };
    return (parsed.calls ?? []).some((call) => typeof call?.tool === 'string' && writes.has(call.tool));
  } catch {
    return false;
  }
}

const refusal = (errorType: string, message: string): ToolResult => ({
  status: 'error',
  error_type: errorType,
  message,
});
