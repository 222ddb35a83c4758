import { observedStats } from '@quill/telemetry';
import { lowerPerCharacter, pairFilter } from './file-search.ts';

/**
 * File texts this context replica has read, by file id and version, least recently used first
 * out (docs/decisions/0061). A file's text changes only with its version (every write to
 * `files.content` moves `files.version`), so an entry is either the text of the version a compile
 * listed or not used: the cache can be old, never stale. Bounded by bytes: a V8 string holds one
 * or two bytes a character, so two a character is counted, and a text's lower-cased copy (made
 * for the search's case-folding terms) and its pair filter (for the others) count once they exist.
 */
export interface CachedText {
  readonly version: number;
  readonly content: string;
  /** The text lower-cased one character at a time, made on first use and kept with the text. */
  lowered(): string;
  /**
   * The text's pair filter for the search (file-search.ts), made on first use and kept with it;
   * none for a text the cache does not keep.
   */
  pairs(): Uint32Array | undefined;
}

export interface TextCacheStats {
  entries: number;
  bytes: number;
  hits: number;
  misses: number;
}

export interface TextCache {
  /** The file's text if the cache holds exactly this version of it. */
  get(fileId: string, version: number): CachedText | undefined;
  /**
   * Keeps a text read from the database; returns it (also when it is too big to keep, or `keep`
   * is false).
   */
  put(fileId: string, version: number, content: string, keep?: boolean): CachedText;
  /**
   * Whether a project of this many characters may be kept: at most half the cache, so that one
   * project bigger than that does not push every other author's texts out on each compile (it is
   * read whole every time instead, as with no cache).
   */
  keeps(projectChars: number): boolean;
  stats(): TextCacheStats;
}

const BYTES_PER_CHARACTER = 2;

/** The cache's size and lookups as metrics, read at each scrape (docs/operations.md "Metrics"). */
export function observeTextCache(cache: TextCache): void {
  observedStats(
    {
      bytes: { name: 'quill.context.text_cache.bytes', kind: 'gauge', description: 'file texts kept, bytes' },
      entries: { name: 'quill.context.text_cache.entries', kind: 'gauge', description: 'file texts kept' },
      hits: {
        name: 'quill.context.text_cache.hits',
        kind: 'counter',
        description: 'texts a compile found kept at the version it listed',
      },
      misses: {
        name: 'quill.context.text_cache.misses',
        kind: 'counter',
        description: 'listed texts not kept at the listed version, so read from PostgreSQL',
      },
    },
    () => cache.stats(),
  );
}

export function createTextCache(
  maxBytes: number,
  lower: (text: string) => string = lowerPerCharacter,
): TextCache {
  // A Map iterates in insertion order: re-inserting on every use keeps the least recent first.
  const entries = new Map<string, Entry>();
  const counters = { bytes: 0, hits: 0, misses: 0 };

  interface Entry extends CachedText {
    bytes: number;
  }

  const evictOver = (limit: number) => {
    for (const [fileId, entry] of entries) {
      if (counters.bytes <= limit) return;
      entries.delete(fileId);
      counters.bytes -= entry.bytes;
    }
  };

  // What an entry makes later (its lower-cased copy, its pair filter) counts only while the
  // entry is still the cached one.
  const grow = (fileId: string, entry: Entry, extra: number) => {
    if (entries.get(fileId) !== entry || extra === 0) return;
    entry.bytes += extra;
    counters.bytes += extra;
    evictOver(maxBytes);
  };

  const makeEntry = (fileId: string, version: number, content: string): Entry => {
    let loweredText: string | undefined;
    let pairBits: Uint32Array | undefined;
    const entry: Entry = {
      version,
      content,
      bytes: content.length * BYTES_PER_CHARACTER,
      lowered() {
        if (loweredText !== undefined) return loweredText;
        loweredText = lower(content);
        grow(fileId, entry, loweredText === content ? 0 : loweredText.length * BYTES_PER_CHARACTER);
        return loweredText;
      },
      pairs() {
        if (pairBits !== undefined) return pairBits;
        // A text not kept is searched once: its filter would cost more than the scans it saves.
        if (entries.get(fileId) !== entry) return undefined;
        pairBits = pairFilter(content);
        grow(fileId, entry, pairBits.byteLength);
        return pairBits;
      },
    };
    return entry;
  };

  return {
    get(fileId, version) {
      const entry = entries.get(fileId);
      if (entry === undefined || entry.version !== version) {
        counters.misses++;
        return undefined;
      }
      counters.hits++;
      entries.delete(fileId);
      entries.set(fileId, entry);
      return entry;
    },
    put(fileId, version, content, keep = true) {
      if (!keep) return makeEntry(fileId, version, content);
      const current = entries.get(fileId);
      // Two compiles may read the same version at once; an older read never replaces a newer.
      if (current !== undefined && current.version >= version) {
        if (current.version === version) return current;
        return makeEntry(fileId, version, content);
      }
      const entry = makeEntry(fileId, version, content);
      if (current !== undefined) {
        entries.delete(fileId);
        counters.bytes -= current.bytes;
      }
      if (entry.bytes > maxBytes) return entry;
      entries.set(fileId, entry);
      counters.bytes += entry.bytes;
      evictOver(maxBytes);
      return entry;
    },
    keeps(projectChars) {
      return projectChars * BYTES_PER_CHARACTER * 2 <= maxBytes;
    },
    stats() {
      return { entries: entries.size, ...counters };
    },
  };
}
