import type { SseFrame } from '@quill/contracts';
import type { StepEmitter } from './frame-emitter.ts';

/**
 * Seed 000 CHAT_HOLD, worker side. When the task says `hold_chat`, the author-facing chat text a
 * step writes after its first successful body write is kept back instead of streamed (file bodies
 * are never held) and reported as `held_text`; the router later releases it unchanged or discards
 * it when the draft really goes to review. The same wrapper notices whether the step ended right
 * after a completed, saved `<file>` block (docs/agent-behaviour.md file-stream continuation). It only watches
 * the frames going through, so the worker loop needs no extra hooks.
 */
export interface ChatHoldEmitter extends StepEmitter {
  /** The step-result fields this wrapper owns. */
  report(): { held_text?: string; ended_on_file_block?: boolean };
  /** What the wrapper has seen so far, for the step journal (a worker that takes over resumes it). */
  snapshot(): ChatHoldSnapshot;
}

export interface ChatHoldSnapshot {
  holding: boolean;
  held: string;
  last?: 'file' | 'text' | 'tool' | undefined;
}

/** create_file starts the hold only for body files; the other body tools change existing text. */
const BODY_FILE_TYPES = new Set(['draft', 'script']);
const BODY_WRITE_TOOLS = new Set(['edit_file', 'write_chapter', 'append_file']);

export function isBodyWrite(name: string, args: Record<string, unknown>): boolean {
  if (name === 'create_file') return BODY_FILE_TYPES.has(String(args.file_type ?? ''));
  return BODY_WRITE_TOOLS.has(name);
}

export function withChatHold(
  inner: StepEmitter,
  options: { holdChat: boolean; resume?: ChatHoldSnapshot },
): ChatHoldEmitter {
  let holding = options.resume?.holding ?? false;
  let held = options.resume?.held ?? '';
  const callArguments = new Map<string, { name: string; args: Record<string, unknown> }>();
  // What the step did last that matters for continuation: a saved file, chat text or a tool call.
  let last: 'file' | 'text' | 'tool' | undefined = options.resume?.last;

  const observe = (value: SseFrame) => {
    if (value.type === 'file_saved') last = 'file';
    else if (value.type === 'tool_call') {
      last = 'tool';
      callArguments.set(value.tool_call_id, { name: value.tool_name, args: value.arguments });
    } else if (value.type === 'tool_result' && value.status === 'ok' && options.holdChat) {
      const call = callArguments.get(value.tool_call_id);
      if (call && isBodyWrite(call.name, call.args)) holding = true;
    }
  };

  return {
    text(delta) {
      if (delta.trim()) last = 'text';
      if (holding) held += delta;
      else inner.text(delta);
    },
    // Reasoning is never held: it is not chat text of the reply.
    thinking(delta) {
      inner.thinking(delta);
    },
    fileDelta(fileId, delta) {
      inner.fileDelta(fileId, delta);
    },
    emit(value) {
      observe(value);
      inner.emit(value);
    },
    close: () => inner.close(),
    settle: () => inner.settle(),
    snapshot: () => ({ holding, held, ...(last ? { last } : {}) }),
    get framesPublished() {
      return inner.framesPublished;
    },
    report() {
      return {
        ...(held.trim() ? { held_text: held } : {}),
        ...(last === 'file' ? { ended_on_file_block: true } : {}),
      };
    },
  };
}
