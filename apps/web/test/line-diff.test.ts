import { describe, expect, it } from 'vitest';
import { diffLines } from '../src/files/line-diff.ts';

describe('diffLines', () => {
  it('keeps common lines and marks what only one side has', () => {
    expect(diffLines('一\n二\n三', '一\n二改\n三\n四')).toEqual([
      { kind: 'same', text: '一' },
      { kind: 'theirs', text: '二' },
      { kind: 'mine', text: '二改' },
      { kind: 'same', text: '三' },
      { kind: 'mine', text: '四' },
    ]);
  });

  it('marks every line when the texts are too long to compare', () => {
    expect(diffLines('a\nb', 'a', 1).map((line) => line.kind)).toEqual(['theirs', 'theirs', 'mine']);
  });
});
