import type {
  AgentRole,
  BodyPartialReason,
  ChatMessage,
  FileWrite,
  TokenUsage,
  ToolCall,
} from '@quill/contracts';
import { frame } from '@quill/contracts';
import {
  type FirstAdmission,
  type LlmAttempt,
  type LlmClient,
  type ModelTarget,
  TextAccumulator,
} from '@quill/llm';
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
  /** What the model must be told about where its bodies went (a draft instead of the file). */
  notices: string[];
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
  /**
   * Persists a captured `<file>` body (fenced, compare-and-set: it may land in a draft); returns
   * the write or undefined when refused. `partialReason` marks a body that did not reach `</file>`.
   */
  saveFileBody(
    file: PendingFile,
    body: string,
    partialReason?: BodyPartialReason,
    /** The reply's chat text before the body (the step journal's record of the reply). */
    replyText?: string,
  ): Promise<FileWrite | undefined>;
  signal?: AbortSignal;
  /** Why the signal fired (the run's stop reason), for a body the stop cut short. */
  stopReason?: () => string | undefined;
  /**
   * True when the signal fired to hand the step to another worker: the call is redone there, so
   * a body it was writing is dropped, not saved as partial.
   */
  abandoned?: () => boolean;
  /** Pins the model provider per session (failover). */
  sessionId?: string;
  /** That session's first admission, read ahead while the turn opened (`LlmClient.readAdmission`). */
  admission?: Promise<FirstAdmission>;
  /** The role's model per provider and output cap, from the pinned definition (docs/kernel.md). */
  targets?: Readonly<Record<string, ModelTarget>>;
  maxOutputTokens?: number;
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
  const notices: string[] = [];
  // Both grow by a delta per token for the whole reply: kept flat (TextAccumulator).
  const chatText = new TextAccumulator();
  let body = new TextAccumulator();
  if (request.resume) body.append(request.resume.body);
  let openFile: PendingFile | undefined = request.resume?.file;
  let keepOpen = false;
  let streamFailed = false;
  let finishReason: string | undefined;

  const closeFile = async (partialReason?: BodyPartialReason) => {
    if (!openFile) return;
    const file = openFile;
    openFile = undefined;
    const write = await saveOpenCapture(
      dependencies,
      { file, body: body.toString() },
      partialReason,
      chatText.toString(),
    );
    body = new TextAccumulator();
    if (write) {
      filesWritten.push(write);
      const notice = draftNotice(write);
      if (notice) notices.push(notice);
    }
  };
  // A capture still open when the stream ends did not reach `</file>`: why decides how it is kept.
  const cutReason = (): BodyPartialReason | undefined => {
    if (dependencies.signal?.aborted) return partialReasonForStop(dependencies.stopReason?.());
    if (streamFailed) return 'provider_error';
    if (finishReason === 'length') return 'output_limit';
    // The model ended its reply without the closing tag: it considers the body done.
    return undefined;
  };

  const apply = async (events: ReturnType<ReturnType<typeof createFileCapture>['feed']>) => {
    for (const event of events) {
      if (event.kind === 'text') {
        chatText.append(event.text);
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
          body.append(event.text);
          emitter.fileDelta(openFile.fileId, event.text);
        } else {
          // A body with no file created for it is still shown, as chat text.
          chatText.append(event.text);
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
    ...(dependencies.admission ? { admission: dependencies.admission } : {}),
    ...(dependencies.targets ? { targets: dependencies.targets } : {}),
    ...(dependencies.maxOutputTokens === undefined ? {} : { maxOutputTokens: dependencies.maxOutputTokens }),
    ...(dependencies.onAttempt ? { onAttempt: dependencies.onAttempt } : {}),
  });
  let next = await stream.next();
  try {
    while (!next.done) {
      const event = next.value;
      if (event.type === 'text') await apply(capture.feed(event.delta));
      else if (event.type === 'thinking') emitter.thinking(event.delta);
      next = await stream.next();
    }
    finishReason = next.value.finishReason;
    keepOpen =
      request.keepOpenOnLength === true &&
      next.value.finishReason === 'length' &&
      next.value.toolCalls.length === 0 &&
      capture.capturing &&
      openFile !== undefined;
  } catch (error) {
    streamFailed = true;
    throw error;
  } finally {
    await apply(capture.finish());
    if (!keepOpen && !dependencies.abandoned?.()) await closeFile(cutReason());
  }
  const result = next.value;
  return {
    text: chatText.toString(),
    toolCalls: result.toolCalls,
    finishReason: result.finishReason,
    usage: result.usage,
    provider: result.provider,
    model: result.model,
    filesWritten,
    rawText: result.text,
    failovers: result.failovers ?? 0,
    notices,
    ...(keepOpen && openFile ? { openCapture: { file: openFile, body: body.toString() } } : {}),
  };
}

const STOP_PARTIAL_REASONS: ReadonlySet<string> = new Set([
  'user_stopped',
  'client_disconnected',
  'wall_clock_timeout',
]);

/** The partial reason of a body that a run stop cut short. */
export function partialReasonForStop(stopReason: string | undefined): BodyPartialReason {
  return stopReason && STOP_PARTIAL_REASONS.has(stopReason)
    ? (stopReason as BodyPartialReason)
    : 'interrupted';
}

const DRAFT_WHY: Record<string, string> = {
  author_saved: 'the author saved their own text in it while you were writing',
  file_changed: 'it changed while you were writing',
  file_deleted: 'the author deleted it while you were writing',
  partial_over_text: 'your body was cut off before </file> and the file already holds text',
};

/** The tool-result-like note that tells the model its body went to a draft, or undefined. */
export function draftNotice(write: FileWrite): string | undefined {
  if (!write.draft_of) return undefined;
  const why = DRAFT_WHY[write.draft_reason ?? 'file_changed'] ?? DRAFT_WHY.file_changed;
  return JSON.stringify({
    status: 'ok',
    summary: `Your body was NOT written into “${write.draft_of.title}” because ${why}. It was saved as a separate draft “${write.title}” (id ${write.file_id}) that the author can review and accept. Do not overwrite “${write.draft_of.title}”; tell the author where the draft is.`,
    data: {
      file_id: write.file_id,
      title: write.title,
      draft_of: write.draft_of,
      draft_reason: write.draft_reason,
    },
  });
}

/**
 * Saves a captured `<file>` body and tells the author. Also used by the worker for a body a
 * truncated reply left open when no continuation follows (the run stopped, the turn cap hit).
 */
export async function saveOpenCapture(
  dependencies: Pick<TurnDependencies, 'emitter' | 'state' | 'runId' | 'saveFileBody'>,
  open: OpenCapture,
  partialReason?: BodyPartialReason,
  replyText?: string,
): Promise<FileWrite | undefined> {
  const body = normaliseFileBody(open.body);
  // An empty capture writes nothing: the file still waits for its body (empty-file guard).
  if (body === '') return undefined;
  const write = await dependencies.saveFileBody(open.file, body, partialReason, replyText);
  if (!write) return undefined;
  dependencies.state.pendingFile = undefined;
  // The model knows the text it wrote, at the file it actually went to; a draft leaves the
  // model's view of the original as it was, so a later edit of it is checked against that.
  recordOwnWrite(dependencies.state, write.file_id, write.version, body);
  dependencies.emitter.emit(fileSavedFrame(dependencies.runId, write));
  return write;
}

/** The author's frame for a saved body: where it went and whether it is complete. */
export function fileSavedFrame(runId: string, write: FileWrite) {
  return frame('file_saved', runId, {
    file_id: write.file_id,
    title: write.title,
    version: write.version,
    chars: write.body_chars,
    saved_as: write.draft_of ? 'draft' : 'file',
    ...(write.draft_of ? { draft_of: write.draft_of } : {}),
    ...(write.draft_reason ? { draft_reason: write.draft_reason } : {}),
    partial: write.partial_reason !== undefined,
    ...(write.partial_reason ? { partial_reason: write.partial_reason } : {}),
  });
}
