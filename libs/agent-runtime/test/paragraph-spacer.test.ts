import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createParagraphSpacer } from '../src/author-text-shaper.ts';

/** The same spacer keeping every character of the line: the behaviour the bounded one must keep. */
const unboundedSpacer = () => createParagraphSpacer(Number.POSITIVE_INFINITY);

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
    // A numbered item whose number is longer than the kept head, a list item after more blanks
    // than the head holds, and a prose line longer than it. A list line keeps its single break
    // before prose, and so does prose before an indented line; prose after prose gets a blank line.
    const text = `${'7'.repeat(30)}. 条目\n散文\n${'　'.repeat(20)}- 条目\n散文\n${'雨'.repeat(40)}\n散文\n`;
    const shaped = spacer.feed(text);
    expect(shaped).toBe(reference.feed(text));
    expect(shaped).toBe(
      `${'7'.repeat(30)}. 条目\n散文\n${'　'.repeat(20)}- 条目\n散文\n\n${'雨'.repeat(40)}\n\n散文`,
    );
  });
});
