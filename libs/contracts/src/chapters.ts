/**
 * Chapter order from titles, so the compiler can find "the previous chapter" and siblings without
 * a chapter-number column: 「第十二章」, 「第12章」, "Chapter 12", "12 雨夜".
 */
const DIGITS: Record<string, number> = {
  零: 0,
  〇: 0,
  一: 1,
  二: 2,
  两: 2,
  三: 3,
  四: 4,
  五: 5,
  六: 6,
  七: 7,
  八: 8,
  九: 9,
};
const UNITS: Record<string, number> = { 十: 10, 百: 100, 千: 1000 };

export function parseChineseNumber(text: string): number | null {
  if (/^\d+$/.test(text)) return Number(text);
  let total = 0;
  let current = 0;
  for (const character of text) {
    const digit = DIGITS[character];
    const unit = UNITS[character];
    if (digit !== undefined) current = digit;
    else if (unit !== undefined) {
      total += (current === 0 ? 1 : current) * unit;
      current = 0;
    } else return null;
  }
  const value = total + current;
  return text.length > 0 ? value : null;
}

const CHAPTER_PATTERNS = [
  /第\s*([0-9零〇一二两三四五六七八九十百千]+)\s*[章回节幕集]/,
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
