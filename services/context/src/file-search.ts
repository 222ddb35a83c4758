/**
 * The retrieval search's rules, as pure functions over texts already read (docs/decisions/0061):
 * a file's score is the number of distinct query terms found in its text or title; a term with a
 * Latin letter is found without case, any other (CJK bigrams, digits) exactly as written; hits
 * rank by that number, then by the title's similarity to the request, then newest first. These
 * are the rules PostgreSQL applied when it ran the search (ILIKE and `strpos`), held against that
 * statement by services/context/test/file-search.test.ts.
 */
export interface FileSearchHit {
  id: string;
  /** Distinct query terms found in the content or title. */
  hits: number;
  /** pg_trgm similarity of the title to the query. */
  titleSimilarity: number;
  content: string;
}

/** A term matched without case: PostgreSQL's ILIKE folded it, and only Latin letters fold in a query term. */
export function foldsCase(term: string): boolean {
  return /[A-Za-z]/.test(term);
}

/**
 * Lower case one character at a time, as PostgreSQL's lower() does under a UTF-8 libc locale
 * (towlower on each character). JavaScript's toLowerCase also applies Unicode's two mappings that
 * are not one character to one: İ becomes "i̇" (two characters) and a word-final Σ becomes ς.
 * Mapped first to their one-character forms, the rest of toLowerCase is the per-character map.
 */
export function lowerPerCharacter(text: string): string {
  return text
    .replace(/[\u0130\u03a3]/g, (character) => (character === '\u0130' ? 'i' : '\u03c3'))
    .toLowerCase();
}

/**
 * Which pairs of adjacent UTF-16 code units a text holds, hashed into a set of bits: a term whose
 * own pairs are not all set is not in the text, and `includes` would have scanned all of it to
 * say so. Most terms are absent from most files (a request's CJK bigrams against a novel's
 * chapters), so the search scans only where a term may be; a set bit can be another pair's, and
 * `includes` still decides. 2^14 bits (2 KB) a text: a chapter's ~2,500 distinct pairs set ~15 %.
 */
export const PAIR_FILTER_BITS = 1 << 14;

export function pairFilter(text: string): Uint32Array {
  const bits = new Uint32Array(PAIR_FILTER_BITS / 32);
  for (let index = 1; index < text.length; index++) {
    const bit = pairBit(text.charCodeAt(index - 1), text.charCodeAt(index));
    bits[bit >>> 5]! |= 1 << (bit & 31);
  }
  return bits;
}

/** False when the text the filter was made of cannot hold the term (a term shorter than 2 may). */
export function mayHold(filter: Uint32Array, term: string): boolean {
  for (let index = 1; index < term.length; index++) {
    const bit = pairBit(term.charCodeAt(index - 1), term.charCodeAt(index));
    if ((filter[bit >>> 5]! & (1 << (bit & 31))) === 0) return false;
  }
  return true;
}

function pairBit(first: number, second: number): number {
  // Fibonacci hashing of the pair as one 32-bit number: the top 14 bits.
  return Math.imul((first << 16) | second, 0x9e3779b1) >>> 18;
}

/** A text as the search reads it (a kept text is one: text-cache.ts). */
export interface SearchedText {
  content: string;
  /** The content through lowerPerCharacter; asked for only when a term folds case. */
  lowered(): string;
  /** The content's pairFilter, made once per kept text; none for one searched once. */
  pairs(): Uint32Array | undefined;
}

/** How many of the (distinct) terms a file holds in its text or its title. */
export function distinctTermsFound(title: string, text: SearchedText, terms: readonly string[]): number {
  let found = 0;
  let loweredTitle: string | undefined;
  for (const term of terms) {
    if (foldsCase(term)) {
      const needle = lowerPerCharacter(term);
      loweredTitle ??= lowerPerCharacter(title);
      if (text.lowered().includes(needle) || loweredTitle.includes(needle)) found++;
    } else if (title.includes(term)) {
      found++;
    } else {
      const pairs = text.pairs();
      if ((pairs === undefined || mayHold(pairs, term)) && text.content.includes(term)) found++;
    }
  }
  return found;
}

export interface ScoredFile extends FileSearchHit {
  /** ISO-8601 in UTC with microseconds, as the listing gives it: ordered as text. */
  updatedAt: string;
}

/** Files that hold a term ranked: most terms first, then the closest title, then the newest. */
export function rankHits(files: readonly ScoredFile[], limit: number): FileSearchHit[] {
  return [...files]
    .sort(
      (a, b) =>
        b.hits - a.hits ||
        b.titleSimilarity - a.titleSimilarity ||
        (a.updatedAt < b.updatedAt ? 1 : a.updatedAt > b.updatedAt ? -1 : 0),
    )
    .slice(0, limit)
    .map(({ id, hits, titleSimilarity, content }) => ({ id, hits, titleSimilarity, content }));
}
