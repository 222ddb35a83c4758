import { chapterNumber as parseChapterNumber } from '@quill/contracts';

// Chapter order is shared with the gateway's manuscript export; it lives in the contracts.
export { parseChineseNumber, requestedChapter } from '@quill/contracts';

// A compile plans the chapters four to six times (the scene, the candidates, the reads, the
// assembly), each over every draft of the project, and parsing a title is most of a plan: ~160 µs
// a plan over a 200-file novel, ~1 ms a compile. A title's number never changes, so it is parsed
// once per title.
const MAX_TITLES = 50_000;
const numbers = new Map<string, number | null>();

/** The chapter number a file's title gives (memoised by title). */
export function chapterNumber(title: string): number | null {
  const known = numbers.get(title);
  if (known !== undefined) return known;
  const parsed = parseChapterNumber(title);
  if (numbers.size >= MAX_TITLES) numbers.delete(numbers.keys().next().value as string);
  numbers.set(title, parsed);
  return parsed;
}
