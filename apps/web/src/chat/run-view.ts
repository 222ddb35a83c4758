import type { StreamedFrame } from '@quill/client';
import { type FrameOf, isTerminalFrame, standingFrames } from '@quill/contracts';

/** One thing the chat shows for a run, in the order the frames arrived. */
export type ChatItem =
  | { kind: 'text'; key: string; agent: string; content: string }
  | { kind: 'thinking'; key: string; agent: string; content: string }
  | {
      kind: 'tool';
      key: string;
      agent: string;
      name: string;
      arguments: Record<string, unknown>;
      status: 'running' | 'ok' | 'error';
      summary?: string;
      errorType?: string;
      progress?: { completed: number; total: number; message: string };
    }
  | { kind: 'handoff'; key: string; from: string; to: string; reason: string }
  | {
      kind: 'file';
      key: string;
      fileId: string;
      title: string;
      saved?: FrameOf<'file_saved'>;
      removed?: boolean;
    }
  | { kind: 'clarification'; key: string; question: string }
  | { kind: 'steering'; key: string; content: string }
  | { kind: 'stopped'; key: string; reason: string }
  | { kind: 'complete'; key: string }
  | { kind: 'error'; key: string; code: string; message: string }
  | { kind: 'refund'; key: string; credits: number };

/** A file body as it streams in (`file_start`, `file_delta`…, then `file_saved`). */
export interface StreamingFile {
  fileId: string;
  title: string;
  content: string;
  done: boolean;
}

export interface RunView {
  items: ChatItem[];
  files: Map<string, StreamingFile>;
  /** The file the agent is writing right now, if any. */
  writingFileId: string | undefined;
  /** The terminal frame arrived (workflow_complete, terminal workflow_stopped or error). */
  ended: boolean;
  /** `done` arrived: nothing more will come. */
  finished: boolean;
  waitingUser: boolean;
}

/**
 * The chat view of a run, folded from its frames. Pure, so a reload that re-reads stored frames
 * and resumes after the last id builds exactly what was on screen. `step_resumed` is applied
 * first with `standingFrames` (docs/ai-writes.md "The step journal"): frames of an unfinished
 * model call that another worker redid are dropped, so no word shows twice.
 */
export function foldRun(received: readonly StreamedFrame[]): RunView {
  const view: RunView = {
    items: [],
    files: new Map(),
    writingFileId: undefined,
    ended: false,
    finished: false,
    waitingUser: false,
  };
  const tools = new Map<string, Extract<ChatItem, { kind: 'tool' }>>();
  const fileItems = new Map<string, Extract<ChatItem, { kind: 'file' }>>();
  for (const { id, frame } of standingFrames(received)) {
    const key = String(id);
    const last = view.items.at(-1);
    switch (frame.type) {
      case 'text':
      case 'thinking':
        // Coalesced deltas of one agent's reply read as one block.
        if (last?.kind === frame.type && last.agent === frame.agent) last.content += frame.content;
        else view.items.push({ kind: frame.type, key, agent: frame.agent, content: frame.content });
        break;
      case 'tool_call': {
        const card = {
          kind: 'tool' as const,
          key: `tool-${frame.tool_call_id}`,
          agent: frame.agent,
          name: frame.tool_name,
          arguments: frame.arguments,
          status: 'running' as const,
        };
        tools.set(frame.tool_call_id, card);
        view.items.push(card);
        break;
      }
      case 'tool_progress': {
        const card = tools.get(frame.tool_call_id);
        if (card) card.progress = { completed: frame.completed, total: frame.total, message: frame.message };
        break;
      }
      case 'tool_result': {
        const card = tools.get(frame.tool_call_id);
        if (!card) break;
        card.status = frame.status;
        card.summary = frame.summary;
        if (frame.error_type) card.errorType = frame.error_type;
        break;
      }
      case 'handoff':
        view.items.push({
          kind: 'handoff',
          key,
          from: frame.from_agent,
          to: frame.to_agent,
          reason: frame.reason,
        });
        break;
      case 'file_start': {
        view.files.set(frame.file_id, {
          fileId: frame.file_id,
          title: frame.title,
          content: '',
          done: false,
        });
        view.writingFileId = frame.file_id;
        const item = { kind: 'file' as const, key, fileId: frame.file_id, title: frame.title };
        fileItems.set(frame.file_id, item);
        view.items.push(item);
        break;
      }
      case 'file_delta': {
        const file = view.files.get(frame.file_id);
        if (file) file.content += frame.content;
        break;
      }
      case 'file_saved': {
        const target = frame.draft_of?.file_id ?? frame.file_id;
        for (const id of [frame.file_id, target]) {
          const file = view.files.get(id);
          if (file) file.done = true;
        }
        if (view.writingFileId === frame.file_id || view.writingFileId === target)
          view.writingFileId = undefined;
        const item = fileItems.get(frame.file_id) ?? fileItems.get(target);
        if (item) item.saved = frame;
        else view.items.push({ kind: 'file', key, fileId: frame.file_id, title: frame.title, saved: frame });
        break;
      }
      case 'file_removed': {
        const item = fileItems.get(frame.file_id);
        if (item) item.removed = true;
        else view.items.push({ kind: 'file', key, fileId: frame.file_id, title: frame.title, removed: true });
        view.files.delete(frame.file_id);
        if (view.writingFileId === frame.file_id) view.writingFileId = undefined;
        break;
      }
      case 'clarification_requested':
        view.items.push({ kind: 'clarification', key, question: frame.question });
        break;
      case 'steering_received':
        view.items.push({ kind: 'steering', key, content: frame.content });
        break;
      case 'workflow_stopped':
        if (frame.reason === 'waiting_user') view.waitingUser = true;
        else view.items.push({ kind: 'stopped', key, reason: frame.reason });
        break;
      case 'workflow_complete':
        view.items.push({ kind: 'complete', key });
        break;
      case 'error':
        view.items.push({ kind: 'error', key, code: frame.code, message: frame.message });
        break;
      case 'quota_refunded':
        view.items.push({ kind: 'refund', key, credits: frame.credits });
        break;
      case 'done':
        view.finished = true;
        break;
      default:
        break;
    }
    if (isTerminalFrame(frame)) {
      view.ended = true;
      view.writingFileId = undefined;
    }
  }
  return view;
}
