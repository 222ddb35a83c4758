/**
 * Splits a streamed reply into chat text and `<file>` body (docs/agent-behaviour.md 「文件流式写入分两次回复」):
 * an IDLE / CAPTURING state machine fed with deltas as they arrive.
 *
 * - A tag may arrive split across deltas: a suffix that could still become a tag is held back
 *   until the next delta (or the end of the reply) decides it.
 * - In IDLE, `<file>` opens a capture only when a file is waiting for its body (`canOpen`) and
 *   the tag stands at the start of a line or ends its line. Anything else is an inline mention
 *   (`用 <file> 标签`, `` `<file>` ``) and stays chat text.
 * - Inside a ``` fenced block of chat text tags are literal text.
 * - Seed 000 「StreamProcessor 丢掉 IDLE 下独占一行的标记」: with no capture possible, a tag alone on
 *   its line (a stray `</file>`, or `<file>` with no file created for it) is dropped.
 * - In CAPTURING, the first `</file>` closes the body. The line break right after it is layout,
 *   like the one right after `<file>`: the chat text that follows starts without it.
 */
export type CaptureEvent =
  | { kind: 'text'; text: string }
  | { kind: 'file_open' }
  | { kind: 'file_delta'; text: string }
  | { kind: 'file_close' };

const OPEN_TAG = '<file>';
const CLOSE_TAG = '</file>';
const FENCE = '```';

export interface FileCapture {
  feed(delta: string): CaptureEvent[];
  /** End of the reply: decides held-back text; an unclosed capture stays open for the caller. */
  finish(): CaptureEvent[];
  readonly capturing: boolean;
}

export interface FileCaptureOptions {
  /** Whether a `<file>` may open a capture now (a file waits for its body). Default: always. */
  canOpen?: () => boolean;
  /** Start inside a capture: the continuation of a body cut off by the output limit. */
  capturing?: boolean;
}

export function createFileCapture(options: FileCaptureOptions = {}): FileCapture {
  const canOpen = options.canOpen ?? (() => true);
  let capturing = options.capturing ?? false;
  let inFence = false;
  // Only spaces or tabs since the last newline of chat text (or the start of the reply).
  let lineStart = true;
  let held = '';
  // Just closed a body: a line break that comes next is the tag's own and is dropped.
  let afterClose = false;

  const run = (text: string, final: boolean): CaptureEvent[] => {
    const events: CaptureEvent[] = [];
    const push = (kind: 'text' | 'file_delta', value: string) => {
      if (!value) return;
      const last = events.at(-1);
      if (last?.kind === kind) last.text += value;
      else events.push({ kind, text: value });
    };
    let index = 0;
    while (index < text.length) {
      const rest = text.slice(index);
      if (capturing) {
        const close = rest.indexOf(CLOSE_TAG);
        if (close >= 0) {
          push('file_delta', rest.slice(0, close));
          events.push({ kind: 'file_close' });
          capturing = false;
          lineStart = false;
          afterClose = true;
          index += close + CLOSE_TAG.length;
          continue;
        }
        const keep = final ? 0 : partialTagSuffix(rest, CLOSE_TAG);
        push('file_delta', rest.slice(0, rest.length - keep));
        held = rest.slice(rest.length - keep);
        return events;
      }
      if (afterClose) {
        const breakLength = rest.startsWith('\r\n') ? 2 : rest[0] === '\n' ? 1 : 0;
        if (rest === '\r' && !final) {
          held = rest;
          return events;
        }
        afterClose = false;
        if (breakLength > 0) {
          lineStart = true;
          index += breakLength;
          continue;
        }
      }
      if (lineStart) {
        const step = atLineStart(rest, final);
        if (step === 'hold') {
          held = rest;
          return events;
        }
        if (step.event) events.push(step.event);
        push('text', step.text);
        index += step.consumed;
        continue;
      }
      // Mid-line: text runs up to the next newline or `<`.
      const stop = rest.search(/[\n<]/);
      if (stop === -1) {
        push('text', rest);
        break;
      }
      if (rest[stop] === '\n') {
        push('text', rest.slice(0, stop + 1));
        lineStart = true;
        index += stop + 1;
        continue;
      }
      push('text', rest.slice(0, stop));
      index += stop;
      const step = midLineTag(text.slice(index), final);
      if (step === 'hold') {
        held = text.slice(index);
        return events;
      }
      if (step.event) events.push(step.event);
      push('text', step.text);
      index += step.consumed;
    }
    return events;
  };

  type Step = 'hold' | { consumed: number; text: string; event?: CaptureEvent };

  /** At the start of a chat line: fences, tags that open a capture, and lone tag lines. */
  const atLineStart = (rest: string, final: boolean): Step => {
    const first = rest[0]!;
    if (first === ' ' || first === '\t' || first === '\n') return { consumed: 1, text: first };
    if (rest.startsWith(FENCE)) {
      inFence = !inFence;
      lineStart = false;
      return { consumed: FENCE.length, text: FENCE };
    }
    const couldBe = (token: string) => token.startsWith(rest) && !final;
    if (couldBe(FENCE)) return 'hold';
    if (inFence) {
      lineStart = false;
      return { consumed: 0, text: '' };
    }
    if (rest.startsWith(OPEN_TAG) && canOpen()) {
      capturing = true;
      lineStart = false;
      return { consumed: OPEN_TAG.length, text: '', event: { kind: 'file_open' } };
    }
    for (const tag of [OPEN_TAG, CLOSE_TAG]) {
      if (rest.startsWith(tag)) {
        const after = endOfLineAfter(rest, tag.length, final);
        if (after === 'undecided') return 'hold';
        // Lone on its line with nothing to capture: dropped, newline included.
        if (after !== 'more') return { consumed: after, text: '' };
        lineStart = false;
        return { consumed: tag.length, text: tag };
      }
      if (couldBe(tag)) return 'hold';
    }
    lineStart = false;
    return { consumed: 0, text: '' };
  };

  /** A `<` inside a chat line: `<file>` ending the line opens a capture; the rest is text. */
  const midLineTag = (rest: string, final: boolean): Step => {
    if (!inFence && canOpen()) {
      if (rest.startsWith(OPEN_TAG)) {
        const after = endOfLineAfter(rest, OPEN_TAG.length, final);
        if (after === 'undecided') return 'hold';
        if (after !== 'more') {
          capturing = true;
          return { consumed: OPEN_TAG.length, text: '', event: { kind: 'file_open' } };
        }
        return { consumed: OPEN_TAG.length, text: OPEN_TAG };
      }
      if (OPEN_TAG.startsWith(rest) && !final) return 'hold';
    }
    return { consumed: 1, text: '<' };
  };

  return {
    feed(delta) {
      const text = held + delta;
      held = '';
      return run(text, false);
    },
    finish() {
      const text = held;
      held = '';
      return run(text, true);
    },
    get capturing() {
      return capturing;
    },
  };
}

/**
 * After a tag at `from`: `more` when other text follows on its line, the length through the end
 * of the line (spaces and the newline) when nothing does, `undecided` while the delta ends first.
 */
function endOfLineAfter(text: string, from: number, final: boolean): number | 'more' | 'undecided' {
  let index = from;
  while (text[index] === ' ' || text[index] === '\t') index++;
  if (index === text.length) return final ? index : 'undecided';
  if (text[index] === '\n') return index + 1;
  if (text[index] === '\r' && text[index + 1] === '\n') return index + 2;
  if (text[index] === '\r' && index + 1 === text.length && !final) return 'undecided';
  return 'more';
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
