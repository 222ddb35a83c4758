import { isTerminalFrame, type SseFrame, WRITE_TOOL_NAMES } from '@quill/contracts';

/**
 * What a run put in front of the author, read from its own frames (docs/agent-behaviour.md 「流的终止、停止与计费」).
 * Billing trusts these, not a summary: the frames are what the author actually saw.
 */

/**
 * The shortest reply prose segment that is substantive output. Transitional narration
 * ("好的，我先创建第一章的草稿文件，然后写正文。", a one-line wrap-up) stays well below it; an
 * answer the author asked for in chat reaches it.
 */
export const PROSE_MIN_CHARS = 200;

// A message that ended this way finished its reply; any other stop reason (error, aborted…)
// means the model was cut off, so whatever it was writing is still "being written".
const COMPLETED_MESSAGE_STOPS = new Set(['stop', 'tool_calls', 'length', 'content_filter']);

export interface RunOutput {
  /** The first terminal frame stored for the run, if any (the router publishes it before settling). */
  terminal: SseFrame | undefined;
  /** A write left body text: `file_saved` with chars > 0, or a successful write tool result. */
  wroteBody: boolean;
  /** The longest reply prose segment, in characters (trimmed). */
  longestProseChars: number;
  /** `wroteBody` or a prose segment of at least PROSE_MIN_CHARS. */
  producedOutput: boolean;
  /** When the run ended an agent was in the middle of its reply (text or a file body). */
  replyInProgress: boolean;
}

export interface OutputOptions {
  /** Tools whose successful result leaves body text (default: the registry's WRITE_TOOL_NAMES). */
  writeToolNames?: readonly string[];
  proseMinChars?: number;
}

export function analyzeRunOutput(frames: readonly SseFrame[], options: OutputOptions = {}): RunOutput {
  const writeTools = new Set(options.writeToolNames ?? WRITE_TOOL_NAMES);
  const proseMinChars = options.proseMinChars ?? PROSE_MIN_CHARS;
  const terminalIndex = frames.findIndex(isTerminalFrame);
  const terminal = terminalIndex === -1 ? undefined : frames[terminalIndex];
  const wroteBody = frames.some(
    (value) =>
      (value.type === 'file_saved' && value.chars > 0) ||
      (value.type === 'tool_result' && value.status === 'ok' && writeTools.has(value.tool_name)),
  );
  const longestProseChars = longestProseSegment(frames);
  return {
    terminal,
    wroteBody,
    longestProseChars,
    producedOutput: wroteBody || longestProseChars >= proseMinChars,
    replyInProgress: replyOpenAt(terminalIndex === -1 ? frames : frames.slice(0, terminalIndex)),
  };
}

/**
 * A reply prose segment is a contiguous run of `text` frames of one agent; any other frame (a
 * tool call, a file, thinking, another agent's text) ends it. Segments are measured apart so
 * that many short narrations never add up to "output".
 */
function longestProseSegment(frames: readonly SseFrame[]): number {
  let longest = 0;
  let agent: string | undefined;
  let segment = '';
  const close = () => {
    longest = Math.max(longest, [...segment.trim()].length);
    agent = undefined;
    segment = '';
  };
  for (const value of frames) {
    if (value.type !== 'text') {
      close();
      continue;
    }
    if (agent !== undefined && agent !== value.agent) close();
    agent = value.agent;
    segment += value.content;
  }
  close();
  return longest;
}

/** Whether the last agent activity before the end was reply text or a file body still open. */
function replyOpenAt(frames: readonly SseFrame[]): boolean {
  let open = false;
  for (const value of frames) {
    switch (value.type) {
      case 'text':
        if (value.content.trim()) open = true;
        break;
      case 'file_start':
      case 'file_delta':
        open = true;
        break;
      case 'message_end':
        if (COMPLETED_MESSAGE_STOPS.has(value.stop_reason)) open = false;
        break;
      case 'agent_start':
      case 'thinking':
      case 'tool_call':
      case 'tool_result':
      case 'file_saved':
      case 'handoff':
      case 'clarification_requested':
        open = false;
        break;
      default:
        // run_started, steering_received and the like are not agent activity.
        break;
    }
  }
  return open;
}
