import type { AgentRole, ChatMessage, FileWrite, TokenUsage, ToolCall } from '@quill/contracts';
import { frame } from '@quill/contracts';
import type { LlmAttempt, LlmClient } from '@quill/llm';
import { type PendingFile, recordOwnWrite, type ToolDefinition, type ToolRunState } from '@quill/tools';
import { createFileCapture, normaliseFileBody } from './file-capture.ts';
import type { StepEmitter } from './frame-emitter.ts';

export interface TurnResult {
  text: string;
  toolCalls: ToolCall[];
  finishReason: string;
  usage: TokenUsage;
  provider: string;
  model: string;
  filesWritten: FileWrite[];
  /** The reply exactly as the model wrote it (tags and body included), for a continuation. */
  rawText: string;
  /** Provider switches during this call (0 or 1). */
  failovers: number;
  /** Set when the reply was cut at the length limit inside a `<file>` body that stays open. */
  openCapture?: OpenCapture;
}

/** A `<file>` body cut by the output limit, carried into the continuation call. */
export interface OpenCapture {
  file: PendingFile;
  body: string;
}

export interface TurnDependencies {
  llm: LlmClient;
  emitter: StepEmitter;
  state: ToolRunState;
  runId: string;
  role: AgentRole;
  /** Persists a captured `<file>` body (fenced); returns the write or undefined when refused. */
  saveFileBody(file: PendingFile, body: string): Promise<FileWrite | undefined>;
  signal?: AbortSignal;
  /** Pins the model provider per session (failover). */
  sessionId?: string;
  /** Accounting hook: one call per provider attempt (usage records). */
  onAttempt?: (attempt: LlmAttempt) => void;
}

/**
 * One model call: streams its deltas to the author, sending `<file>` bodies as file frames and
 * saving each body when its closing tag arrives (or when the stream ends inside it, so nothing
 * captured is lost).
 */
export async function runModelTurn(
  dependencies: TurnDependencies,
  request: {
    messages: ChatMessage[];
    tools: ToolDefinition[];
    /** Continue a `<file>` body the previous (truncated) reply left open. */
    resume?: OpenCapture;
    /** Leave a body open when this reply is cut at the length limit (a continuation follows). */
    keepOpenOnLength?: boolean;
  },
): Promise<TurnResult> {
  const { llm, emitter, state, runId } = dependencies;
  // Only a created file waiting for its body opens a capture (one file streams at a time).
  const capture = createFileCapture({
    capturing: request.resume !== undefined,
    canOpen: () => state.pendingFile !== undefined,
  });
  const filesWritten: FileWrite[] = [];
  let chatText = '';
  let body = request.resume?.body ?? '';
  let openFile: PendingFile | undefined = request.resume?.file;
  let keepOpen = false;

  const closeFile = async () => {
    if (!openFile) return;
    const file = openFile;
    openFile = undefined;
    const write = await saveOpenCapture(dependencies, { file, body });
    body = '';
    if (write) filesWritten.push(write);
  };

  const apply = async (events: ReturnType<ReturnType<typeof createFileCapture>['feed']>) => {
    for (const event of events) {
      if (event.kind === 'text') {
        chatText += event.text;
        emitter.text(event.text);
      } else if (event.kind === 'file_open') {
        const pending = state.pendingFile;
        if (pending) {
          openFile = pending;
          emitter.emit(
            frame('file_start', runId, {
              agent: dependencies.role,
              file_id: pending.fileId,
              title: pending.title,
              file_type: pending.fileType,
            }),
          );
        }
      } else if (event.kind === 'file_delta') {
        if (openFile) {
          body += event.text;
          emitter.fileDelta(openFile.fileId, event.text);
        } else {
          // A body with no file created for it is still shown, as chat text.
          chatText += event.text;
          emitter.text(event.text);
        }
      } else {
        await closeFile();
      }
    }
  };

  const stream = llm.streamChat({
    messages: request.messages,
    tools: request.tools,
    role: dependencies.role,
    runId,
    ...(dependencies.signal ? { signal: dependencies.signal } : {}),
    ...(dependencies.sessionId ? { sessionId: dependencies.sessionId } : {}),
    ...(dependencies.onAttempt ? { onAttempt: dependencies.onAttempt } : {}),
  });
  let next = await stream.next();
  try {
    while (!next.done) {
      const event = next.value;
      if (event.type === 'text') await apply(capture.feed(event.delta));
      else if (event.type === 'thinking') {
        emitter.emit(frame('thinking', runId, { agent: dependencies.role, content: event.delta }));
      }
      next = await stream.next();
    }
    keepOpen =
      request.keepOpenOnLength === true &&
      next.value.finishReason === 'length' &&
      next.value.toolCalls.length === 0 &&
      capture.capturing &&
      openFile !== undefined;
  } finally {
    await apply(capture.finish());
    if (!keepOpen) await closeFile();
  }
  const result = next.value;
  return {
    text: chatText,
    toolCalls: result.toolCalls,
    finishReason: result.finishReason,
    usage: result.usage,
    provider: result.provider,
    model: result.model,
    filesWritten,
    rawText: result.text,
    failovers: result.failovers ?? 0,
    ...(keepOpen && openFile ? { openCapture: { file: openFile, body } } : {}),
  };
}

/**
 * Saves a captured `<file>` body and tells the author. Also used by the worker for a body a
 * truncated reply left open when no continuation follows (the run stopped, the turn cap hit).
 */
export async function saveOpenCapture(
  dependencies: Pick<TurnDependencies, 'emitter' | 'state' | 'runId' | 'saveFileBody'>,
  open: OpenCapture,
): Promise<FileWrite | undefined> {
  const body = normaliseFileBody(open.body);
  // An empty capture writes nothing: the file still waits for its body (empty-file guard).
  if (body === '') return undefined;
  const write = await dependencies.saveFileBody(open.file, body);
  if (!write) return undefined;
  dependencies.state.pendingFile = undefined;
  recordOwnWrite(dependencies.state, write.file_id, write.version, body);
  dependencies.emitter.emit(
    frame('file_saved', dependencies.runId, {
      file_id: write.file_id,
      title: write.title,
      version: write.version,
      chars: write.body_chars,
    }),
  );
  return write;
}
