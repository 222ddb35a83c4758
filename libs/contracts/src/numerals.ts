/**
 * The one reader and writer of Chinese numerals in Quill (docs/agent-behaviour.md, 「送审证据用落库后的事实」
 * and the chapter order): chapter titles (第二十三章), length requirements (三千五百字, 3.5万字, 千字)
 * and task-board units all go through here, so 三千五 means 3500 everywhere.
 *
 * Arabic digits mix freely with Chinese units (3千, 1.5万, 3千5); the colloquial short form
 * counts a digit after a unit one unit lower (三千五 = 3500, 一万二 = 12000) unless a 零 came
 * between (一千零五 = 1005).
 */

const DIGITS: Readonly<Record<string, number>> = {
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
const SMALL_UNITS: Readonly<Record<string, number>> = { 十: 10, 百: 100, 千: 1000 };
const BIG_UNITS: Readonly<Record<string, number>> = { 万: 10_000, 亿: 100_000_000 };

/** Characters a numeral may contain, for building patterns around it. */
export const NUMERAL_CHARACTERS = '零〇一二两三四五六七八九十百千万亿';

/**
 * A regular-expression source matching one numeral: Arabic (with an optional decimal part) and
 * Chinese digits and units in any mix. Callers put it in a capture group.
 */
export const NUMERAL_PATTERN = `(?:\\d+(?:\\.\\d+)?[${NUMERAL_CHARACTERS}]*|[${NUMERAL_CHARACTERS}]+(?:\\d+(?:\\.\\d+)?)?)`;

type Token = { kind: 'digit'; value: number; zero: boolean } | { kind: 'small' | 'big'; value: number };

function tokenize(text: string): Token[] | null {
  const tokens: Token[] = [];
  const pattern = /\d+(?:\.\d+)?|./gsu;
  for (const match of text.matchAll(pattern)) {
    const piece = match[0];
    if (/^\d/.test(piece)) tokens.push({ kind: 'digit', value: Number(piece), zero: false });
    else if (piece in DIGITS)
      tokens.push({ kind: 'digit', value: DIGITS[piece]!, zero: DIGITS[piece] === 0 });
    else if (piece in SMALL_UNITS) tokens.push({ kind: 'small', value: SMALL_UNITS[piece]! });
    else if (piece in BIG_UNITS) tokens.push({ kind: 'big', value: BIG_UNITS[piece]! });
    else return null;
  }
  return tokens;
}

/**
 * The value of a whole numeral string ("三千五", "3.5万", "第" excluded), null when it is not one.
 * Surrounding blanks are ignored; anything else makes it unreadable.
 */
export function parseChineseNumber(input: string): number | null {
  const tokens = tokenize(input.trim());
  if (!tokens || tokens.length === 0) return null;
  let total = 0;
  let section = 0;
  let digit: number | undefined;
  // The unit the next bare digit would be one step below (三千五: 千 → 五 counts hundreds).
  let lastUnit = 1;
  let zeroSinceUnit = false;
  let smallCeiling = Number.POSITIVE_INFINITY;
  let bigCeiling = Number.POSITIVE_INFINITY;
  const trailing = () => {
    if (digit === undefined) return 0;
    // Only a single figure is short for the next unit down: 1万2000 is 12000, not 2×10^6.
    const short = lastUnit > 1 && !zeroSinceUnit && Number.isInteger(digit) && digit < 10;
    return short ? digit * (lastUnit / 10) : digit;
  };
  for (const token of tokens) {
    if (token.kind === 'digit') {
      if (token.zero) {
        zeroSinceUnit = true;
        if (digit === undefined && section === 0 && total === 0) digit = 0;
        continue;
      }
      // Two digits in a row (三五, 3三) are a range or a list, not one number.
      if (digit !== undefined && digit !== 0) return null;
      digit = token.value;
    } else if (token.kind === 'small') {
      if (token.value >= smallCeiling) return null;
      section += (digit ?? 1) * token.value;
      smallCeiling = token.value;
      lastUnit = token.value;
      digit = undefined;
      zeroSinceUnit = false;
    } else {
      if (token.value >= bigCeiling) return null;
      // A bare 万 (万字) is one ten thousand; 0万 is zero.
      const value = section === 0 && digit === undefined ? 1 : section + trailing();
      total += value * token.value;
      bigCeiling = token.value;
      smallCeiling = Number.POSITIVE_INFINITY;
      lastUnit = token.value;
      section = 0;
      digit = undefined;
      zeroSinceUnit = false;
    }
  }
  const value = total + section + trailing();
  // 3.5 × 10000 and friends: keep the decimal part honest without binary noise.
  return Number(value.toFixed(6));
}

const NUMERAL_AT = new RegExp(NUMERAL_PATTERN, 'u');

/** The first numeral inside a text (「写第二十三章」 → 23, 「千字左右」 → 1000), null when none reads. */
export function findNumber(text: string): number | null {
  const match = NUMERAL_AT.exec(text);
  return match ? parseChineseNumber(match[0]) : null;
}

const WRITTEN_DIGITS = '零一二三四五六七八九';

/** 0..9999 as one section; `leading` when nothing stands before it (十一, not 一十一). */
function formatSection(value: number, leading: boolean): string {
  const places: Array<[number, string]> = [
    [1000, '千'],
    [100, '百'],
    [10, '十'],
    [1, ''],
  ];
  let text = '';
  let pendingZero = false;
  let started = false;
  for (const [place, unit] of places) {
    const figure = Math.floor(value / place) % 10;
    if (figure === 0) {
      if (started) pendingZero = true;
      continue;
    }
    if (pendingZero) text += '零';
    pendingZero = false;
    const omitOne = figure === 1 && place === 10 && leading && !started;
    text += (omitOne ? '' : WRITTEN_DIGITS[figure]) + unit;
    started = true;
  }
  return text;
}

/**
 * A positive integer below 10^12 as chapter titles write it (十一, 二十, 一百零五, 一万零五百);
 * anything else as Arabic digits.
 */
export function formatChineseNumber(value: number): string {
  if (!Number.isInteger(value) || value <= 0 || value >= 1e12) return String(value);
  const parts: Array<[number, string]> = [
    [100_000_000, '亿'],
    [10_000, '万'],
    [1, ''],
  ];
  let text = '';
  let rest = value;
  for (const [unit, name] of parts) {
    const section = Math.floor(rest / unit);
    rest %= unit;
    if (section === 0) continue;
    // A section below a thousand after a higher one needs its 零 (一万零五百).
    if (text && section < 1000) text += '零';
    text += formatSection(section, text === '') + name;
  }
  return text;
}
