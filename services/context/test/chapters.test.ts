import { chapterNumber as parsedNumber } from '@quill/contracts';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { chapterNumber } from '../src/chapters.ts';

describe("a title's chapter number, remembered", () => {
  it('is the number the contracts parse, the first time and every time after', () => {
    const title = fc.oneof(
      fc.string({
        unit: fc.constantFrom(...'第一二三四五六七八九十百零章节回卷 0123456789：旧书店'.split('')),
        maxLength: 12,
      }),
      fc.nat({ max: 300 }).map((value) => `第${value}章`),
    );
    fc.assert(
      fc.property(title, (value) => {
        expect(chapterNumber(value)).toBe(parsedNumber(value));
        expect(chapterNumber(value)).toBe(parsedNumber(value));
      }),
      { numRuns: 500 },
    );
    expect(chapterNumber('第十二章 雨夜')).toBe(12);
    expect(chapterNumber('人物：温言')).toBeNull();
  });
});
