import type { TraceExcluded, TraceLoaded } from '@quill/contracts';
import type { Block, VisibleFile } from './assembler.ts';
import type { TokenCounter } from './budget.ts';
import type { FileSearchHit } from './file-search.ts';
import { queryTerms } from './query-terms.ts';
import { itemBlock, snippetHeader } from './render.ts';

/**
 * Retrieval snippets: the densest window of query terms in each matching file. Runs after the
 * tiers are allocated and skips the files already shown, so a snippet never repeats what the
 * context holds (docs/agent-behaviour.md: 检索只排除最终入选的条目).
 */
export const SNIPPET_CHARS = 360;
export const MAX_SNIPPETS = 6;
// A file matching one bigram of a long request is noise; two distinct terms (or a close title) count.
const MIN_HITS = 2;
const MIN_TITLE_SIMILARITY = 0.3;
const LEAD_CHARS = 60;
const MAX_OCCURRENCES_PER_TERM = 200;

export interface Snippet {
  fileId: string;
  start: number;
  end: number;
  text: string;
  hits: number;
}

/**
 * How many ranked hits the loader asks for: enough that, after the files the context ends up
 * showing (at most `shownAtMost`) are skipped, the usual number of hits is left.
 */
export function searchLimit(shownAtMost: number): number {
  return MAX_SNIPPETS * 2 + shownAtMost;
}

/** The snippets among the ranked hits, over the files still searchable (not shown yet). */
export function pickSnippets(
  hits: readonly FileSearchHit[],
  message: string,
  searchable: ReadonlySet<string>,
): Snippet[] {
  const terms = queryTerms(message);
  if (terms.length === 0 || searchable.size === 0) return [];
  return hits
    .filter((hit) => searchable.has(hit.id))
    .slice(0, MAX_SNIPPETS * 2)
    .filter(
      (hit) => hit.hits >= Math.min(MIN_HITS, terms.length) || hit.titleSimilarity >= MIN_TITLE_SIMILARITY,
    )
    .slice(0, MAX_SNIPPETS)
    .map((hit) => toSnippet(hit, terms));
}

function toSnippet(hit: FileSearchHit, terms: readonly string[]): Snippet {
  const { start, end } = bestWindow(hit.content, terms, SNIPPET_CHARS);
  return { fileId: hit.id, start, end, text: hit.content.slice(start, end), hits: hit.hits };
}

/** The window of `size` chars holding the most distinct terms (then the most occurrences). */
export function bestWindow(
  content: string,
  terms: readonly string[],
  size: number,
): { start: number; end: number } {
  if (content.length <= size) return { start: 0, end: content.length };
  const lower = content.toLowerCase();
  const occurrences: Array<{ at: number; term: number }> = [];
  terms.forEach((term, termIndex) => {
    let from = 0;
    for (let found = 0; found < MAX_OCCURRENCES_PER_TERM; found++) {
      const at = lower.indexOf(term.toLowerCase(), from);
      if (at === -1) break;
      occurrences.push({ at, term: termIndex });
      from = at + term.length;
    }
  });
  if (occurrences.length === 0) return { start: 0, end: size };
  occurrences.sort((a, b) => a.at - b.at);
  let best = { distinct: -1, total: 0, at: 0 };
  let right = 0;
  for (let left = 0; left < occurrences.length; left++) {
    const windowStart = occurrences[left]!.at;
    while (right < occurrences.length && occurrences[right]!.at < windowStart + size - LEAD_CHARS) right++;
    const inside = occurrences.slice(left, right);
    const distinct = new Set(inside.map((occurrence) => occurrence.term)).size;
    if (distinct > best.distinct || (distinct === best.distinct && inside.length > best.total)) {
      best = { distinct, total: inside.length, at: windowStart };
    }
  }
  const start = Math.max(0, Math.min(best.at - LEAD_CHARS, content.length - size));
  return { start, end: Math.min(content.length, start + size) };
}

/** Places snippets (RELEVANT) in the budget left, in rank order; what does not fit is traced. */
export function placeSnippets(
  snippets: readonly Snippet[],
  files: ReadonlyMap<string, VisibleFile>,
  budget: number,
  count: TokenCounter,
): { blocks: Block[]; loaded: TraceLoaded[]; excluded: TraceExcluded[]; used: number; shownIds: string[] } {
  const placed = {
    blocks: [] as Block[],
    loaded: [] as TraceLoaded[],
    excluded: [] as TraceExcluded[],
    used: 0,
  };
  const shownIds: string[] = [];
  for (const snippet of snippets) {
    const file = files.get(snippet.fileId)!;
    const header = snippetHeader(
      file.title,
      file.id,
      snippet.start,
      snippet.end,
      file.chars,
      file.unaccepted,
    );
    const tokens = count(header) + count(snippet.text) + 1;
    const base = {
      source: 'retrieval' as const,
      file_id: file.id,
      title: file.title,
      tier: 'relevant' as const,
    };
    if (placed.used + tokens > budget) {
      placed.excluded.push({ ...base, reason: 'budget', detail: 'no_room', total_chars: file.chars });
      continue;
    }
    placed.used += tokens;
    shownIds.push(file.id);
    placed.blocks.push({ tier: 'relevant', text: itemBlock(header, snippet.text), tokens });
    placed.loaded.push({
      ...base,
      shown_chars: snippet.text.length,
      total_chars: file.chars,
      tokens,
      full: false,
      permission: file.permission,
    });
  }
  return { ...placed, shownIds };
}
