import { describe, expect, it } from 'vitest';
import { diffLines } from '../src/line-diff.ts';
import { mentionsUnit, parseUnits } from '../src/task-board.ts';

describe('diffLines', () => {
  it('is empty for equal texts and locates added lines in the new text', () => {
    expect(diffLines('a\nb', 'a\nb')).toEqual([]);
    const after = 'a\nnew\nb\nc2';
    const hunks = diffLines('a\nb\nc', after);
    expect(hunks.map(({ removed, added }) => ({ removed, added }))).toEqual([
      { removed: [], added: ['new'] },
      { removed: ['c'], added: ['c2'] },
    ]);
    expect(after.slice(hunks[0]!.newStart, hunks[0]!.newEnd)).toBe('new');
    expect(after.slice(hunks[1]!.newStart, hunks[1]!.newEnd)).toBe('c2');
  });

  it('reports a pure removal at the point it happened', () => {
    const [hunk] = diffLines('a\nb\nc', 'a\nc');
    expect(hunk).toEqual({ removed: ['b'], added: [], newStart: 2, newEnd: 2 });
  });
});

describe('task board units', () => {
  it.each([
    ['1-3', [1, 2, 3]],
    ['2, 5', [2, 5]],
    ['1到2、4', [1, 2, 4]],
    ['', []],
  ])('parseUnits(%j)', (spec, units) => {
    expect(parseUnits(spec)).toEqual(units);
  });

  it.each(['a-b', '3-1', '1-500'])('rejects %j', (spec) => {
    expect(parseUnits(spec)).toBeNull();
  });

  it('matches a unit in chapter titles without matching a longer number', () => {
    expect(mentionsUnit('第一章 雨夜', 1)).toBe(true);
    expect(mentionsUnit('第十一章', 1)).toBe(false);
    expect(mentionsUnit('第一百章', 1)).toBe(false);
    expect(mentionsUnit('Chapter 12', 12)).toBe(true);
    expect(mentionsUnit('Chapter 12', 1)).toBe(false);
  });
});
