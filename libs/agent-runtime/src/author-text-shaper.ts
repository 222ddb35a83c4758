import { CJK_PATTERN, type SseFrame, type UiLanguage } from '@quill/contracts';
import type { StepEmitter } from './frame-emitter.ts';

/**
 * Author-visible chat text shaping, AgentTextShaper (docs/agent-behaviour.md 「用户范围与交接规则」):
 *
 * - paragraphs: a single line break between two lines of prose becomes a blank line, and text
 *   that resumes after a tool call or a file body starts a new paragraph; code fences, lists,
 *   tables, quotes and headings keep their own line breaks;
 * - narration: for an author who writes Chinese, English-only sentences the model says next to
 *   its tool calls ("Let me read the outline first.") are not shown. They are held while the
 *   text since the last tool call has no Chinese in it: a following tool call drops them, and so
 *   does any other boundary when they came right after a tool call; Chinese text releases what
 *   came before it unless that was right after a tool call. English text that is neither after
 *   nor before a tool call (an English reply) is shown unchanged.
 *
 * The rules are a pure state machine (`createAgentTextShaper`) fed deltas and boundaries; the
 * step emitter wrapper only routes frames into it.
 */
export interface AgentTextShaper {
  /** A chat text delta; returns what may be shown now. */
  text(delta: string): string;
  /** A tool call or its result goes out: held narration is dropped. */
  toolCall(): void;
  /** A file body, another frame or the end of the step: returns what held text is shown. */
  boundary(): string;
}

export interface TextShaperOptions {
  /** The author's language this turn; narration is only hidden from a Chinese-writing author. */
  authorLanguage?: UiLanguage | undefined;
}

const SENTENCE_END = /[.!?:;…。！？：；\n]/;

export function createAgentTextShaper(options: TextShaperOptions): AgentTextShaper {
  const hideNarration = options.authorLanguage === 'zh';
  const paragraphs = createParagraphSpacer();
  // Narration state, per segment (the text between two tool calls).
  let segmentHasChinese = false;
  let afterTool = false;
  let held = '';
  // A sentence not ended yet while nothing Chinese was seen: not known to be narration yet.
  let open = '';
  let resumeParagraph = false;

  const show = (text: string) => {
    if (!text) return '';
    const lead = resumeParagraph ? paragraphs.breakBefore() : '';
    resumeParagraph = false;
    return lead + paragraphs.feed(text);
  };

  const releaseHeld = () => {
    const text = afterTool ? '' : held + open;
    held = '';
    open = '';
    return text;
  };

  return {
    text(delta) {
      if (!hideNarration || segmentHasChinese) return show(delta);
      const shown = '';
      open += delta;
      for (;;) {
        const end = open.search(SENTENCE_END);
        const sentence = end === -1 ? undefined : open.slice(0, end + 1);
        const candidate = sentence ?? open;
        if (CJK_PATTERN.test(candidate)) {
          // Chinese prose starts: what was held is narration when it followed a tool call.
          const before = afterTool ? '' : held;
          held = '';
          // The blank after dropped narration is not shown either.
          const rest = afterTool ? open.trimStart() : open;
          open = '';
          segmentHasChinese = true;
          afterTool = false;
          return shown + show(before + rest);
        }
        if (sentence === undefined) return shown;
        held += sentence;
        open = open.slice(end + 1);
      }
    },
    toolCall() {
      if (hideNarration) {
        held = '';
        open = '';
      }
      segmentHasChinese = false;
      afterTool = true;
      resumeParagraph = true;
    },
    boundary() {
      const text = show(hideNarration ? releaseHeld() : '');
      segmentHasChinese = false;
      afterTool = false;
      resumeParagraph = true;
      return text;
    },
  };
}

/**
 * How much of a line the spacer keeps: its leading blanks and this many characters after them
 * (more while they are all digits, a numbered list's marker). What makes a line structural (a
 * list marker, a quote, a table, a heading, a fence, or nothing but blanks) is at its start.
 * Keeping every character made one string per character that lived until the line ended: a
 * paragraph of prose, or a whole reply written without a line break.
 */
const LINE_HEAD = 16;

/**
 * Blank lines between prose paragraphs, streamed: a line break is held until the next
 * character shows whether a prose line follows; it is never held longer than one delta.
 * `lineHead` is for the tests, which compare the bounded line with one kept whole (`Infinity`).
 */
export function createParagraphSpacer(lineHead = LINE_HEAD) {
  let inFence = false;
  /** The current line's start: its leading blanks, then up to `lineHead` characters. */
  let line = '';
  let headLength = 0;
  let headDigits = true;
  let pendingBreak = false;
  let lastLine = '';
  let emittedAny = false;
  let trailingBreaks = 0;

  const structural = (text: string) => /^\s*([-*+>|#]|\d+[.)、]|```|~~~)/.test(text) || text.trim() === '';

  const newLine = () => {
    line = '';
    headLength = 0;
    headDigits = true;
  };
  const keep = (character: string) => {
    if (headLength >= lineHead && !headDigits) return;
    line += character;
    if (headLength === 0 && /\s/.test(character)) return;
    headLength++;
    if (!/\d/.test(character)) headDigits = false;
  };

  const out = (text: string) => {
    if (!text) return '';
    emittedAny = true;
    const match = /\n*$/.exec(text);
    const tail = match ? match[0].length : 0;
    trailingBreaks = tail === text.length ? trailingBreaks + tail : tail;
    return text;
  };

  return {
    feed(text: string): string {
      let result = '';
      for (const character of text) {
        if (pendingBreak) {
          pendingBreak = false;
          if (character === '\n') {
            result += '\n\n';
            lastLine = '';
            newLine();
            // Further breaks of an existing blank line are kept as they are.
            continue;
          }
          const blank = !inFence && !structural(lastLine) && !structural(character);
          result += blank ? '\n\n' : '\n';
        }
        if (character === '\n') {
          if (/^\s*(```|~~~)/.test(line)) inFence = !inFence;
          lastLine = line;
          newLine();
          pendingBreak = true;
          continue;
        }
        keep(character);
        result += character;
      }
      return out(result);
    },
    /** Newlines that make what comes next a new paragraph after what was already shown. */
    breakBefore(): string {
      const needed = emittedAny && !inFence ? Math.max(0, 2 - trailingBreaks - (pendingBreak ? 1 : 0)) : 0;
      const held = pendingBreak ? '\n' : '';
      pendingBreak = false;
      lastLine = '';
      newLine();
      return out(held + '\n'.repeat(needed));
    },
  };
}

/**
 * The step emitter with the shaping applied to chat text: tool calls and results, file bodies,
 * other frames (not reasoning) and the end of the step are the boundaries. Any extra members of the wrapped emitter (the chat
 * hold's report and snapshot) stay reachable.
 */
export function withAuthorTextShaping<E extends StepEmitter>(inner: E, options: TextShaperOptions): E {
  const shaper = createAgentTextShaper(options);
  const flush = () => {
    const text = shaper.boundary();
    if (text) inner.text(text);
  };
  const shaped = Object.create(inner) as E;
  Object.assign(shaped, {
    text(delta: string) {
      const text = shaper.text(delta);
      if (text) inner.text(text);
    },
    fileDelta(fileId: string, delta: string) {
      flush();
      inner.fileDelta(fileId, delta);
    },
    emit(value: SseFrame) {
      // Reasoning streams beside the text and is no boundary; a tool's result still belongs to
      // its call, so the text after it is "right after a tool call".
      if (value.type === 'tool_call' || value.type === 'tool_result') shaper.toolCall();
      else if (value.type !== 'thinking') flush();
      inner.emit(value);
    },
    close() {
      flush();
      return inner.close();
    },
    // A journal checkpoint is no boundary of the text: held narration keeps waiting for the next
    // tool call or Chinese text, or the checkpoint after a tool turn would make the narration
    // that follows look like ordinary text.
    settle: () => inner.settle(),
  } satisfies Partial<StepEmitter>);
  return shaped;
}
