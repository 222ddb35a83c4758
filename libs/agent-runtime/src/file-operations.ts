import type { ChatMessage, FileOperation, FileWrite } from '@quill/contracts';

/**
 * What a step did to which file, read off the tool results the worker already has, for the
 * next turn's breadcrumbs (docs/agent-behaviour.md 跨轮记忆: 创建 / 编辑 / 删除 / 按 id 精确读取). Only whole-file
 * reads count as reads; range reads are staleness snapshots, not reads of the text.
 */
interface ToolOutcome {
  status: 'ok' | 'error';
  data?: Record<string, unknown>;
}

const text = (value: unknown): string | undefined => (typeof value === 'string' && value ? value : undefined);

export function fileOperationsOf(toolName: string, outcome: ToolOutcome): FileOperation[] {
  if (outcome.status !== 'ok' || !outcome.data) return [];
  const data = outcome.data;
  const fileId = text(data.file_id) ?? text(data.id);
  const title = text(data.title) ?? '';
  switch (toolName) {
    case 'create_file':
      return fileId ? [{ op: data.reused === true ? 'edited' : 'created', file_id: fileId, title }] : [];
    case 'edit_file':
    case 'rename_file':
      return fileId ? [{ op: 'edited', file_id: fileId, title }] : [];
    case 'delete_file': {
      const deleted = Array.isArray(data.deleted) ? (data.deleted as Array<Record<string, unknown>>) : [];
      return deleted.flatMap((file) =>
        text(file.id)
          ? [{ op: 'deleted' as const, file_id: text(file.id)!, title: text(file.title) ?? '' }]
          : [],
      );
    }
    case 'query_files':
      return fileId && data.full_text === true ? [{ op: 'read', file_id: fileId, title }] : [];
    default:
      return [];
  }
}

/** A `<file>` body written into a file this step did not create is an edit of it (or a new draft). */
export function bodyWriteOperations(
  operations: readonly FileOperation[],
  writes: readonly FileWrite[],
): FileOperation[] {
  const created = new Set(
    operations.filter((operation) => operation.op === 'created').map((operation) => operation.file_id),
  );
  // A body that went to a draft made that draft file (docs/ai-writes.md).
  return writes
    .filter((write) => !created.has(write.file_id))
    .map((write) => ({
      op: write.draft_of ? ('created' as const) : ('edited' as const),
      file_id: write.file_id,
      title: write.title,
    }));
}

/**
 * The step's file operations from its own transcript: each assistant tool call paired with its
 * tool message by tool_call_id. Reading them here, after the loop, keeps the tool loop untouched.
 */
export function fileOperationsFromTranscript(
  messages: readonly ChatMessage[],
  writes: readonly FileWrite[],
): FileOperation[] {
  const names = new Map<string, string>();
  const operations: FileOperation[] = [];
  for (const message of messages) {
    if (message.role === 'assistant') {
      for (const call of message.tool_calls ?? []) names.set(call.id, call.function.name);
    } else if (message.role === 'tool') {
      const name = names.get(message.tool_call_id);
      const outcome = parseOutcome(message.content);
      if (name && outcome) operations.push(...fileOperationsOf(name, outcome));
    }
  }
  return [...operations, ...bodyWriteOperations(operations, writes)];
}

function parseOutcome(content: string): ToolOutcome | undefined {
  try {
    const value = JSON.parse(content) as ToolOutcome;
    return value && (value.status === 'ok' || value.status === 'error') ? value : undefined;
  } catch {
    return undefined;
  }
}
