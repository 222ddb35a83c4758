import { hash } from 'node:crypto';

/*
 * A BPE count costs a few µs per CJK character (docs/decisions/0059), and nearly everything Quill
 * counts was counted before: the fixed lines of the system prompt, file-index lines, history
 * messages, file paragraphs, a tool loop's transcript. What is new is usually one line (the
 * project title in the system prompt) or the end of a text (a file cut to fit a budget, measured
 * prefix by prefix).
 * This counter sums the counts of a text's paragraphs and memoises each paragraph, so only
 * paragraphs it has not seen are tokenised.
 *
 * The sum is exact. o200k's and cl100k's pre-tokenizer cuts text into pieces before BPE, and no
 * piece spans a newline followed by a character that is neither whitespace nor '/': the only
 * pieces holding a newline are whitespace runs and a punctuation run's trailing `[\r\n/]*`, none
 * of which continues into such a character, and the pattern never looks behind. A text's pieces
 * are therefore the pieces of its paragraphs cut at those points (test/paragraph-counter.test.ts).
 */
const MAX_PARAGRAPHS = 32_768;
// Whitespace would join the newline's piece, and '/' a punctuation run's trailing newlines.
const CONTINUES_PIECE = /[\s/]/;

export function createParagraphCounter(
  countText: (text: string) => number,
  maxParagraphs = MAX_PARAGRAPHS,
): (text: string) => number {
  // Insertion-ordered map used as an LRU; keyed by a digest so it never holds authors' texts.
  const counts = new Map<string, number>();
  const countParagraph = (paragraph: string): number => {
    const key = hash('sha1', paragraph, 'base64');
    const cached = counts.get(key);
    if (cached !== undefined) {
      counts.delete(key);
      counts.set(key, cached);
      return cached;
    }
    const tokens = countText(paragraph);
    counts.set(key, tokens);
    if (counts.size > maxParagraphs) counts.delete(counts.keys().next().value as string);
    return tokens;
  };
  return (text) => {
    let total = 0;
    for (const paragraph of paragraphsOf(text)) total += countParagraph(paragraph);
    return total;
  };
}

/** A text cut where no pre-tokenizer piece spans the cut (see above): each part is counted alone. */
export function* paragraphsOf(text: string): Generator<string> {
  let start = 0;
  for (let newline = text.indexOf('\n'); newline !== -1; newline = text.indexOf('\n', newline + 1)) {
    const next = newline + 1;
    if (next < text.length && !CONTINUES_PIECE.test(text[next]!)) {
      yield text.slice(start, next);
      start = next;
    }
  }
  if (start < text.length) yield text.slice(start);
}
