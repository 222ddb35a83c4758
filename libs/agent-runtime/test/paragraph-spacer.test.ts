import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createParagraphSpacer } from '../src/author-text-shaper.ts';

/**
 * The spacer as it was when it kept every character of the current line: the behaviour the
 * bounded one must keep, character for character.
 */
function unboundedSpacer() {
  let inFence = false;
  let line = '';
  let pendingBreak = false;
  let lastLine = '';
  let emittedAny = false;
  let trailingBreaks = 0;
  const structural = (text: string) => /^\s*([-*+>|#]|\d+[.)、]|```|~~~)/.test(text) || text.trim() === '';
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
            line = '';
            continue;
          }
          const blank = !inFence && !structural(lastLine) && !structural(character);
          result += blank ? '\n\n' : '\n';
        }
        if (character === '\n') {
          if (/^\s*(```|~~~)/.test(line)) inFence = !inFence;
          lastLine = line;
          line = '';
          pendingBreak = true;
          continue;
        }
        line += character;
        result += character;
      }
      return out(result);
    },
    breakBefore(): string {
      const needed = emittedAny && !inFence ? Math.max(0, 2 - trailingBreaks - (pendingBreak ? 1 : 0)) : 0;
      const held = pendingBreak ? '\n' : '';
      pendingBreak = false;
      lastLine = '';
      line = '';
      return out(held + '\n'.repeat(needed));
    },
  };
}

// Pieces that make lines of every kind the spacer tells apart, and long ones: blanks (the
// full-width one Chinese prose indents with included), list and quote markers, numbers of any
// length, fences, prose in both languages.
const piece = fc.oneof(
  fc.constantFrom(
    '\n',
    '\n\n',
    ' ',
    '　',
    '\t',
    '\r',
    '-',
    '*',
    '+',
    '>',
    '|',
    '#',
    '.',
    ')',
    '、',
    '`',
    '~',
  ),
  fc.constantFrom('```', '~~~', '  ```ts', '1. ', '12) ', '3、', '- 条目', '> 引文', '| a | b |', '# 标题'),
  fc.stringMatching(/^[0-9]{1,40}$/),
  fc.constantFrom('雨夜里旧书店的灯还亮着', 'The rain kept on.', '林晚推门进去', 'a'),
  fc.string({ unit: fc.constantFrom(' ', '　', '1', '雨', 'x', '.', '\n'), maxLength: 60 }),
);
const delta = fc.array(piece, { minLength: 1, maxLength: 4 }).map((pieces) => pieces.join(''));
const step = fc.oneof(
  { weight: 9, arbitrary: delta.map((text) => ({ text })) },
  { weight: 1, arbitrary: fc.constant(null) },
);

describe('the paragraph spacer', () => {
  it('shapes any stream exactly as when it kept the whole line', () => {
    fc.assert(
      fc.property(fc.array(step, { maxLength: 40 }), (steps) => {
        const bounded = createParagraphSpacer();
        const reference = unboundedSpacer();
        for (const item of steps) {
          if (item === null) expect(bounded.breakBefore()).toBe(reference.breakBefore());
          else expect(bounded.feed(item.text)).toBe(reference.feed(item.text));
        }
      }),
      { numRuns: 3000 },
    );
  });

  it('tells a list marker from prose however far into the line it is decided', () => {
    const spacer = createParagraphSpacer();
    const reference = unboundedSpacer();
    // A numbered item whose number is longer than the kept head, then one with blanks before it.
    // A list line keeps its single break before prose, and so does prose before an indented line;
    // prose after prose gets a blank line.
    const text = `${'7'.repeat(30)}. 条目\n散文\n${'　'.repeat(20)}- 条目\n散文\n${'雨'.repeat(40)}\n散文\n`;
    const shaped = spacer.feed(text);
    expect(shaped).toBe(reference.feed(text));
    expect(shaped).toBe(
      `${'7'.repeat(30)}. 条目\n散文\n${'　'.repeat(20)}- 条目\n散文\n\n${'雨'.repeat(40)}\n\n散文`,
    );
  });
});
