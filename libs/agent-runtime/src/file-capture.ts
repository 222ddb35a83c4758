/**
 * Splits a streamed reply into chat text and `<file>` body (seed 000 「文件流式写入分两次回复」).
 * Tags may arrive split across deltas, so a suffix that could still become a tag is held back
 * until the next delta decides it.
 */
export type CaptureEvent =
  | { kind: 'text'; text: string }
  | { kind: 'file_open' }
  | { kind: 'file_delta'; text: string }
  | { kind: 'file_close' };

const OPEN_TAG = '<file>';
const CLOSE_TAG = '</file>';

export interface FileCapture {
  feed(delta: string): CaptureEvent[];
  /** End of the reply: releases held-back text; an unclosed capture stays open for the caller. */
  finish(): CaptureEvent[];
  readonly capturing: boolean;
}

export function createFileCapture(): FileCapture {
  let capturing = false;
  let held = '';

  const feed = (delta: string): CaptureEvent[] => {
    const events: CaptureEvent[] = [];
    let text = held + delta;
    held = '';
    while (text.length > 0) {
      const tag = capturing ? CLOSE_TAG : OPEN_TAG;
      const index = text.indexOf(tag);
      if (index >= 0) {
        push(events, text.slice(0, index));
        events.push(capturing ? { kind: 'file_close' } : { kind: 'file_open' });
        capturing = !capturing;
        text = text.slice(index + tag.length);
        continue;
      }
      const keep = partialTagSuffix(text, tag);
      push(events, text.slice(0, text.length - keep));
      held = text.slice(text.length - keep);
      break;
    }
    return events;
  };

  const push = (events: CaptureEvent[], text: string) => {
    if (!text) return;
    events.push(capturing ? { kind: 'file_delta', text } : { kind: 'text', text });
  };

  return {
    feed,
    finish() {
      const events: CaptureEvent[] = [];
      push(events, held);
      held = '';
      return events;
    },
    get capturing() {
      return capturing;
    },
  };
}

/** Length of the longest suffix of `text` that is a proper prefix of `tag`. */
function partialTagSuffix(text: string, tag: string): number {
  for (let length = Math.min(tag.length - 1, text.length); length > 0; length--) {
    if (text.endsWith(tag.slice(0, length))) return length;
  }
  return 0;
}

/** The body as saved: the newline right after `<file>` and right before `</file>` are layout. */
export function normaliseFileBody(body: string): string {
  return body.replace(/^\r?\n/, '').replace(/\r?\n$/, '');
}
