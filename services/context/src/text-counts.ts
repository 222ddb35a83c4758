import { LRUCache } from 'lru-cache';
import type { TokenCounter } from './budget.ts';

/**
 * Token counts of long texts by the text itself. The tokenizer's own memo (@quill/llm) keeps
 * counts by paragraph, keyed by a digest, so every count of a file still splits it into
 * paragraphs and hashes each one; the compile counts the same kept file texts on every compile.
 * A kept text is the same string object from compile to compile, and V8 keeps a string's hash in
 * the string, so a Map keyed by it answers at once: a 3,000-character chapter whose paragraphs
 * the memo holds costs ~28 µs to count again, ~0.04 µs to look up (docs/decisions/0061). Most
 * strings here are the text cache's own (text-cache.ts) or slices of them, which V8 keeps as
 * references to the whole; `maxChars` bounds what this keeps alive beyond the cache.
 */
export function countingLongTextsOnce(
  count: TokenCounter,
  options: { minChars: number; maxTexts: number; maxChars: number } = {
    minChars: 512,
    maxTexts: 4_096,
    maxChars: 4_000_000,
  },
): TokenCounter {
  const counts = new LRUCache<string, number>({
    max: options.maxTexts,
    maxSize: options.maxChars,
    sizeCalculation: (_tokens, text) => text.length,
  });
  return (text) => {
    if (text.length < options.minChars || text.length > options.maxChars) return count(text);
    let tokens = counts.get(text);
    if (tokens === undefined) {
      tokens = count(text);
      counts.set(text, tokens);
    }
    return tokens;
  };
}
