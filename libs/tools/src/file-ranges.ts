import { NUMERAL_PATTERN } from '@quill/contracts';

/**
 * Range reads for query_files (docs/agent-behaviour.md 「query_files … 结果标明范围」): a heading's section, the
 * tail, or a character window. Every result says which part of the file it is.
 */
export interface TextRange {
  start: number;
  end: number;
  total: number;
  text: string;
}

/** Longest text one read returns; a longer file is read in windows. */
export const MAX_READ_CHARS = 20_000;

interface Heading {
  title: string;
  level: number;
  start: number;
}

const MARKDOWN_HEADING = /^(#{1,6})\s+(.+?)\s*#*\s*$/;
// 第3章 / 第十二回 / 第一幕…: chapter-like headings count as second level under a "# 卷" heading.
const CHAPTER_HEADING = new RegExp(`^\\s*(第${NUMERAL_PATTERN}[章节回幕卷部集篇].*)$`, 'u');

export function headings(content: string): Heading[] {
  const found: Heading[] = [];
  let offset = 0;
  for (const line of content.split('\n')) {
    const markdown = MARKDOWN_HEADING.exec(line);
    const chapter = markdown ? null : CHAPTER_HEADING.exec(line);
    if (markdown) found.push({ title: markdown[2]!, level: markdown[1]!.length, start: offset });
    else if (chapter) found.push({ title: chapter[1]!.trim(), level: 2, start: offset });
    offset += line.length + 1;
  }
  return found;
}

/** The section under the first heading containing `name`, up to the next heading of its level or above. */
export function sectionRange(content: string, name: string): TextRange | { available: string[] } {
  const all = headings(content);
  const needle = name.trim().toLowerCase();
  const index = all.findIndex((heading) => heading.title.toLowerCase().includes(needle));
  if (index === -1) return { available: all.slice(0, 30).map((heading) => heading.title) };
  const heading = all[index]!;
  const next = all.slice(index + 1).find((other) => other.level <= heading.level);
  return windowRange(content, heading.start, (next?.start ?? content.length) - heading.start);
}

export function tailRange(content: string, chars: number): TextRange {
  const start = Math.max(0, content.length - chars);
  return windowRange(content, start, chars);
}

export function windowRange(content: string, start: number, maxChars: number): TextRange {
  const from = Math.min(Math.max(0, start), content.length);
  const end = Math.min(content.length, from + Math.min(maxChars, MAX_READ_CHARS));
  return { start: from, end, total: content.length, text: content.slice(from, end) };
}

export function describeRange(range: TextRange): string {
  return `${range.start}-${range.end} of ${range.total}`;
}

export function isWholeText(range: TextRange): boolean {
  return range.start === 0 && range.end === range.total;
}
