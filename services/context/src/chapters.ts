import { chapterNumber as parseChapterNumber } from '@quill/contracts';
import { LRUCache } from 'lru-cache';

// Chapter order is shared with the gateway's manuscript export; it lives in the contracts.
export { parseChineseNumber, requestedChapter } from '@quill/contracts';

// A compile plans the chapters five times (the scene, the candidates, the reads, the assembly),
// each over every draft of the project, and parsing a title is most of a plan: ~160 µs a plan
// over a 200-file novel, ~18 once titles are remembered. A title's number never changes.
// Chapter numbers are positive, so 0 stands for "not a chapter" (the cache holds no null).
const numbers = new LRUCache<string, number>({ max: 50_000 });

/** The chapter number a file's title gives (remembered by title). */
export function chapterNumber(title: string): number | null {
  let number = numbers.get(title);
  if (number === undefined) {
    number = parseChapterNumber(title) ?? 0;
    numbers.set(title, number);
  }
  return number === 0 ? null : number;
}
