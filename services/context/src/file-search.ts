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

export interface SearchedText {
  title: string;
  content: string;
  /** The content through lowerPerCharacter; asked for only when a term folds case. */
  lowered(): string;
}

/** How many of the (distinct) terms the file holds in its text or title. */
export function distinctTermsFound(file: SearchedText, terms: readonly string[]): number {
  let found = 0;
  let loweredTitle: string | undefined;
  for (const term of terms) {
    if (foldsCase(term)) {
      const needle = lowerPerCharacter(term);
      loweredTitle ??= lowerPerCharacter(file.title);
      if (file.lowered().includes(needle) || loweredTitle.includes(needle)) found++;
    } else if (file.content.includes(term) || file.title.includes(term)) {
      found++;
    }
  }
  return found;
}

export interface ScoredFile extends FileSearchHit {
  /** ISO-8601 in UTC with microseconds, as the listing gives it: ordered as text. */
  updatedAt: string;
}

/** The files that hold a term, most terms first, then the closest title, then the newest. */
export function rankHits(files: readonly ScoredFile[], limit: number): FileSearchHit[] {
  return files
    .filter((file) => file.hits > 0)
    .sort(
      (a, b) =>
        b.hits - a.hits ||
        b.titleSimilarity - a.titleSimilarity ||
        (a.updatedAt < b.updatedAt ? 1 : a.updatedAt > b.updatedAt ? -1 : 0),
    )
    .slice(0, limit)
    .map(({ id, hits, titleSimilarity, content }) => ({ id, hits, titleSimilarity, content }));
}
