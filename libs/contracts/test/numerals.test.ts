import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { chapterNumber, formatChineseNumber, parseChineseNumber } from '../src/index.ts';
import { findNumber } from '../src/numerals.ts';

/**
 * The one table of numeral cases for the whole codebase (docs/agent-behaviour.md, the numeral
 * parser): chapter titles, length requirements and task-board units all read numbers through
 * these functions, so a case added here holds everywhere.
 */
const PARSE_CASES: Array<[string, number | null]> = [
  ['三千五', 3500],
  ['三千零五', 3005],
  ['一千零五', 1005],
  ['两万', 20_000],
  ['一万二', 12_000],
  ['一万零二', 10_002],
  ['两万三千', 23_000],
  ['3.5万', 35_000],
  ['1.5万', 15_000],
  ['3千', 3000],
  ['3千5', 3500],
  ['1万2000', 12_000],
  ['千', 1000],
  ['万', 10_000],
  ['十', 10],
  ['十二', 12],
  ['二十', 20],
  ['二十三', 23],
  ['一百零一', 101],
  ['一百一十', 110],
  ['两千三百', 2300],
  ['三千零五十', 3050],
  ['一亿', 100_000_000],
  ['零', 0],
  ['〇', 0],
  ['3000', 3000],
  [' 12 ', 12],
  ['2.5', 2.5],
  ['', null],
  ['三五', null],
  ['二零二四', null],
  ['十十', null],
  ['百千', null],
  ['万万', null],
  ['3三', null],
  ['abc', null],
  ['三千字', null],
];

describe('parseChineseNumber', () => {
  it.each(PARSE_CASES)('%j → %j', (text, value) => {
    expect(parseChineseNumber(text)).toBe(value);
  });
});

describe('numerals inside text', () => {
  it.each<[string, number | null]>([
    ['千字左右', 1000],
    ['写三千五百字', 3500],
    ['大概3.5万字', 35_000],
    ['写第二十三章', 23],
    ['没有数字', null],
  ])('findNumber(%j) = %j', (text, value) => {
    expect(findNumber(text)).toBe(value);
  });

  it.each<[string, number | null]>([
    ['第二十三章 渡口', 23],
    ['第十二章', 12],
    ['第3千章', 3000],
    ['第一万零一章', 10_001],
    ['第12章', 12],
    ['全书大纲', null],
  ])('chapterNumber(%j) = %j', (title, value) => {
    expect(chapterNumber(title)).toBe(value);
  });

  it.each<[number, string]>([
    [1, '一'],
    [10, '十'],
    [11, '十一'],
    [20, '二十'],
    [105, '一百零五'],
    [110, '一百一十'],
    [1005, '一千零五'],
    [10_500, '一万零五百'],
    [12_000, '一万二千'],
    [100_010, '十万零一十'],
  ])('formatChineseNumber(%i) = %s', (value, text) => {
    expect(formatChineseNumber(value)).toBe(text);
  });
});

describe('numeral properties', () => {
  const positive = fc.integer({ min: 1, max: 999_999_999_999 });

  it('reads back every number it writes', () => {
    fc.assert(fc.property(positive, (value) => parseChineseNumber(formatChineseNumber(value)) === value));
  });

  it('reads Arabic digits as themselves, and with 万 as ten thousand times', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 99_999_999 }), (value) => {
        return (
          parseChineseNumber(String(value)) === value && parseChineseNumber(`${value}万`) === value * 10_000
        );
      }),
    );
  });

  it('reads a digit after a unit as the next unit down unless a 零 stands between', () => {
    const digit = fc.integer({ min: 1, max: 9 });
    fc.assert(
      fc.property(digit, digit, (head, tail) => {
        const [h, t] = [formatChineseNumber(head), formatChineseNumber(tail)];
        return (
          parseChineseNumber(`${h}千${t}`) === head * 1000 + tail * 100 &&
          parseChineseNumber(`${h}千零${t}`) === head * 1000 + tail &&
          parseChineseNumber(`${h}万${t}`) === head * 10_000 + tail * 1000
        );
      }),
    );
  });

  it('finds a chapter number in any title that writes it', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 99_999 }), fc.constantFrom('章', '回', '节'), (value, unit) => {
        return (
          chapterNumber(`第${formatChineseNumber(value)}${unit} 雨夜`) === value &&
          chapterNumber(`第${value}${unit}`) === value
        );
      }),
    );
  });
});
