import type { AgentRole, ChatMessage, FileWrite, TokenUsage, ToolCall } from '@quill/contracts';
import { frame } from '@quill/contracts';
import type { LlmClient } from '@quill/llm';
import type { PendingFile, ToolDefinition, ToolRunState } from '@quill/tools';
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
}

/**
 * One model call: streams its deltas to the author, sending `<file>` bodies as file frames and
 * saving each body when its closing tag arrives (or when the stream ends inside it, so nothing
 * captured is lost).
 */
export async function runModelTurn(
  dependencies: TurnDependencies,
  request: { messages: ChatMessage[]; tools: ToolDefinition[] },
): Promise<TurnResult> {
  const { llm, emitter, state, runId } = dependencies;
  const capture = createFileCapture();
  const filesWritten: FileWrite[] = [];
  let chatText = '';
  let body = '';
  let openFile: PendingFile | undefined;

  const closeFile = async () => {
    if (!openFile) return;
    const file = openFile;
    openFile = undefined;
    const write = await dependencies.saveFileBody(file, normaliseFileBody(body));
    body = '';
    if (write) {
      filesWritten.push(write);
      state.pendingFile = undefined;
      emitter.emit(
        frame('file_saved', runId, {
          file_id: write.file_id,
          title: write.title,
          version: write.version,
          chars: write.body_chars,
        }),
      );
    }
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
  } finally {
    await apply(capture.finish());
    await closeFile();
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
  };
}
