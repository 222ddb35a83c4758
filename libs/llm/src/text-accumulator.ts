/** Deltas kept as they came before they are joined into the text. */
const JOIN_EVERY = 64;

/**
 * A text that grows by small deltas for as long as a reply streams (the reply, its reasoning, a
 * file body). `text += delta` keeps one concatenation node per delta for the text's whole life,
 * ~32 B in V8 next to the delta's 2–4 B of characters: a writer streaming 500 runs grew its live
 * heap by ~1.2 MB a second that way, and every full collection marked each node
 * (docs/decisions/0073). Here the deltas are joined every JOIN_EVERY into one flat piece, and
 * the pieces into the text: one node per JOIN_EVERY deltas. The text read is the same string.
 */
export class TextAccumulator {
  #joined = '';
  #parts: string[] = [];
  #length = 0;

  append(delta: string): void {
    if (delta === '') return;
    this.#parts.push(delta);
    this.#length += delta.length;
    if (this.#parts.length >= JOIN_EVERY) this.#join();
  }

  /** In UTF-16 units, as `string.length`. */
  get length(): number {
    return this.#length;
  }

  toString(): string {
    if (this.#parts.length > 0) this.#join();
    return this.#joined;
  }

  #join(): void {
    this.#joined += this.#parts.join('');
    this.#parts = [];
  }
}
