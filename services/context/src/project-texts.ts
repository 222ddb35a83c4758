import { type FileText, readFileTexts, titleSimilarities } from '@quill/db';
import type { Pool } from 'pg';
import { distinctTermsFound, type FileSearchHit, rankHits, type ScoredFile } from './file-search.ts';
import { type CachedText, createTextCache, type TextCache } from './text-cache.ts';

/** A file as the compile's listing names it: the version is what makes a cached text usable. */
export interface ListedFile {
  id: string;
  title: string;
  version: number;
  updatedAt: string;
  /** Its length in characters: what the project's texts would take in the cache. */
  chars: number;
}

export interface SearchPart {
  files: readonly ListedFile[];
  limit: number;
}

/**
 * The texts a compile shows and searches, read through this replica's cache (docs/decisions/0061).
 * A cached text is used only for a file the compile's own listing names at that version, so a
 * file of another project, or one the listing does not hold, is always read from the database
 * under the project's filter.
 */
export interface ProjectTexts {
  /** Current texts of the given live files; `listed` says which version of each the compile saw. */
  contents(
    projectId: string,
    fileIds: readonly string[],
    listed: ReadonlyMap<string, ListedFile>,
  ): Promise<Map<string, string>>;
  /**
   * The ranked hits of each part for the terms: the texts read once for every part, searched
   * here; the similarity of the hit files' titles to the query asked of PostgreSQL in one statement.
   * `listed` is the compile's whole listing, as for `contents`.
   */
  search(input: {
    projectId: string;
    listed: ReadonlyMap<string, ListedFile>;
    parts: readonly SearchPart[];
    terms: readonly string[];
    query: string;
  }): Promise<FileSearchHit[][]>;
}

export const DEFAULT_TEXT_CACHE_BYTES = 64 * 1024 * 1024;

export function createProjectTexts(
  pool: Pool,
  cache: TextCache = createTextCache(DEFAULT_TEXT_CACHE_BYTES),
): ProjectTexts {
  // Reads in flight, by project and file: the search and the candidates of one compile, or two
  // compiles of a project on a replica that has not read it yet (a launch storm after a deploy),
  // read each text once. Keyed by project too: a read answers only under its project's filter.
  // A read started for an older listing may return the older text, so a compile whose listing
  // names a newer version than the read's reads the file itself.
  const reading = new Map<string, { batch: Promise<Map<string, FileText>>; atLeast: number }>();

  const read = async (
    projectId: string,
    fileIds: readonly string[],
    listed: ReadonlyMap<string, ListedFile>,
  ): Promise<Map<string, CachedText>> => {
    const texts = new Map<string, CachedText>();
    const waits: Array<Promise<void>> = [];
    let projectChars = 0;
    for (const file of listed.values()) projectChars += file.chars;
    const kept = cache.keeps(projectChars);
    const keep = (found: Map<string, FileText>, fileId: string) => {
      const text = found.get(fileId);
      // Kept under the version read, which may be newer than the listing's: the text is current.
      if (text) texts.set(fileId, cache.put(fileId, text.version, text.content, kept));
    };
    const unread: string[] = [];
    for (const fileId of new Set(fileIds)) {
      const version = listed.get(fileId)?.version;
      const cached = version === undefined ? undefined : cache.get(fileId, version);
      if (cached) {
        texts.set(fileId, cached);
        continue;
      }
      const pending = reading.get(`${projectId}/${fileId}`);
      if (pending && pending.atLeast >= (version ?? 0))
        waits.push(pending.batch.then((found) => keep(found, fileId)));
      else unread.push(fileId);
    }
    if (unread.length > 0) {
      const batch = readFileTexts(pool, projectId, unread);
      for (const fileId of unread) {
        reading.set(`${projectId}/${fileId}`, { batch, atLeast: listed.get(fileId)?.version ?? 0 });
      }
      waits.push(
        batch
          .then((found) => {
            for (const fileId of unread) keep(found, fileId);
          })
          .finally(() => {
            for (const fileId of unread) {
              if (reading.get(`${projectId}/${fileId}`)?.batch === batch)
                reading.delete(`${projectId}/${fileId}`);
            }
          }),
      );
    }
    await Promise.all(waits);
    return texts;
  };

  return {
    async contents(projectId, fileIds, listed) {
      const texts = await read(projectId, fileIds, listed);
      return new Map([...texts].map(([fileId, text]) => [fileId, text.content]));
    },

    async search({ projectId, listed, parts, terms, query }) {
      if (terms.length === 0 || parts.every((part) => part.files.length === 0)) return parts.map(() => []);
      const searched = new Set(parts.flatMap((part) => part.files.map((file) => file.id)));
      const texts = await read(projectId, [...searched], listed);
      const found = new Map<string, number>();
      for (const [fileId, text] of texts) {
        const hits = distinctTermsFound(listed.get(fileId)!.title, text, terms);
        if (hits > 0) found.set(fileId, hits);
      }
      const titles = [...new Set([...found.keys()].map((fileId) => listed.get(fileId)!.title))];
      const similarities = await titleSimilarities(pool, titles, query);
      const similarityOf = new Map(titles.map((title, index) => [title, similarities[index]!]));
      return parts.map((part) => {
        const scored: ScoredFile[] = [];
        for (const file of part.files) {
          const hits = found.get(file.id);
          if (hits === undefined) continue;
          scored.push({
            id: file.id,
            hits,
            titleSimilarity: similarityOf.get(file.title)!,
            content: texts.get(file.id)!.content,
            updatedAt: file.updatedAt,
          });
        }
        return rankHits(scored, part.limit);
      });
    },
  };
}
