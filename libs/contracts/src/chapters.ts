import { NUMERAL_PATTERN, parseChineseNumber } from './numerals.ts';

/**
 * Chapter order from titles, so the compiler can find "the previous chapter" and siblings without
 * a chapter-number column: 「第十二章」, 「第12章」, "Chapter 12", "12 雨夜". Numerals are read by
 * the one parser in numerals.ts.
 */
const CHAPTER_PATTERNS = [
  new RegExp(`第\\s*(${NUMERAL_PATTERN})\\s*[章回节幕集]`, 'u'),
  /\bchapter\s+(\d+)/i,
  /^\s*(\d{1,4})(?=[\s._\-、:：])/,
];

export function chapterNumber(title: string): number | null {
  for (const pattern of CHAPTER_PATTERNS) {
    const match = pattern.exec(title);
    if (match?.[1]) {
      const value = parseChineseNumber(match[1]);
      if (value !== null && value > 0) return value;
    }
  }
  return null;
}

/** The chapter the author asks for in this message (「写第五章」), if any. */
export function requestedChapter(message: string): number | null {
  return chapterNumber(message);
}
