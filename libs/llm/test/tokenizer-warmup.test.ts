import { createRequire } from 'node:module';
import fc from 'fast-check';
import { BytePairEncodingCore } from 'gpt-tokenizer/BytePairEncodingCore';
import { Cl100KBase } from 'gpt-tokenizer/encodingParams/cl100k_base';
import { O200KBase } from 'gpt-tokenizer/encodingParams/o200k_base';
import type { Tiktoken, TiktokenBPE } from 'js-tiktoken/lite';
import { describe, expect, it } from 'vitest';
import { bpeEncoder, type CoreTables, type EncodingName } from '../src/bpe-tables.ts';
import { estimateTextTokens, warmTokenizer } from '../src/index.ts';
import { LONGEST_COUNTED_PIECE } from '../src/token-estimate.ts';
import { PRE_TOKENIZER_PIECES } from './pre-tokenizer-pieces.ts';

const require = createRequire(import.meta.url);

/** The library's own construction, from the rank module it ships (not the `.tiktoken` file). */
function libraryCore(name: EncodingName): BytePairEncodingCore {
  const ranks = (require(`gpt-tokenizer/bpeRanks/${name}`) as { default: Array<string | number[]> }).default;
  return new BytePairEncodingCore(name === 'o200k_base' ? O200KBase(ranks) : Cl100KBase(ranks));
}

/** js-tiktoken, the tokenizer Quill counted with before: counts must not move. */
function previousTokenizer(name: EncodingName): Tiktoken {
  const { Tiktoken: TiktokenClass } = require('js-tiktoken/lite') as typeof import('js-tiktoken/lite');
  return new TiktokenClass(require(`js-tiktoken/ranks/${name}`) as TiktokenBPE);
}

const SAMPLES = [
  '第一章 雨夜\n林晚推开门，风裹着雨点扑进来。她说：“你终于来了。”',
  'The quick brown fox jumps over the lazy dog. 1234567890 !@#$%^&*()',
  '  indented\tcode() { return [1, 2, 3]; }\n\n\n',
  '🙂 emoji, ｆｕｌｌｗｉｄｔｈ, ÄÖÜ ß, русский текст',
  '\uFEFFusing a byte order mark, <|endoftext|> and <|im_start|> as plain text',
];

describe('tokenizer tables', () => {
  it('builds the table in slices, serving the event loop in between', async () => {
    // This file is its own module graph: nothing has built the o200k table yet.
    let turns = 0;
    const tick = setInterval(() => turns++, 0);
    await warmTokenizer('o200k_base');
    clearInterval(tick);
    // A build in one go would have let no timer run before it resolved.
    expect(turns).toBeGreaterThan(5);
  });

  it('fills the same rank tables as the library constructor, rank by rank', async () => {
    await warmTokenizer('o200k_base');
    // cl100k was never warmed: its first use builds it synchronously.
    for (const name of ['o200k_base', 'cl100k_base'] as const) {
      const libraryTokenizer = libraryCore(name);
      const ours = bpeEncoder(name) as unknown as CoreTables;
      const library = libraryTokenizer as unknown as CoreTables;
      expect(ours.mergeableBytePairRankCount).toBe(library.mergeableBytePairRankCount);
      expect(ours.bytePairRankDecoder).toEqual(library.bytePairRankDecoder);
      expect(ours.bytePairStringRankEncoder).toEqual(library.bytePairStringRankEncoder);
      expect(ours.bytePairNonUtfRankDecoder).toEqual(library.bytePairNonUtfRankDecoder);
      expect(ours.bytePairNonUtfSortedEncoder).toEqual(library.bytePairNonUtfSortedEncoder);
      // Without a byte order mark, which the library's own look-up misreads (next test).
      const text = SAMPLES.filter((sample) => !sample.includes('\uFEFF')).join('\n');
      expect(bpeEncoder(name).encodeNative(text)).toEqual(libraryTokenizer.encodeNative(text));
      const all = SAMPLES.join('\n');
      expect(bpeEncoder(name).decodeNative(bpeEncoder(name).encodeNative(all))).toBe(all);
    }
  });

  it('looks bytes that start with a byte order mark up as bytes, as tiktoken does', () => {
    const o200k = previousTokenizer('o200k_base');
    for (const text of ['\uFEFF', '\uFEFFé', '\uFEFFusing', 'a\uFEFF\uFEFF\n\n']) {
      expect(bpeEncoder('o200k_base').encodeNative(text)).toEqual(o200k.encode(text, [], []));
    }
    // The library's own core drops the mark while it merges: when this fails after an upgrade,
    // the library reads such bytes right and bpe-tables.ts can use its look-up as it is.
    expect(libraryCore('o200k_base').countNative('\uFEFF')).toBe(2);
    expect(bpeEncoder('o200k_base').countNative('\uFEFF')).toBe(1);
  });

  it('counts what the previous tokenizer counted, samples and generated texts', async () => {
    await warmTokenizer('o200k_base');
    const o200k = previousTokenizer('o200k_base');
    const cl100k = previousTokenizer('cl100k_base');
    for (const text of SAMPLES) {
      expect(estimateTextTokens(text)).toBe(o200k.encode(text, [], []).length);
      expect(estimateTextTokens(text, 'cl100k_base')).toBe(cl100k.encode(text, [], []).length);
    }
    // Texts no longer than a counted piece: js-tiktoken's merge is quadratic in a piece's length,
    // and what Quill counts is cut to such pieces first (token-estimate.ts).
    const piece = fc.oneof(
      fc.constantFrom(...PRE_TOKENIZER_PIECES),
      fc.string({ unit: 'binary', maxLength: 6 }),
    );
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 40 }), (pieces) => {
        const text = pieces.join('').slice(0, LONGEST_COUNTED_PIECE);
        expect(bpeEncoder('o200k_base').countNative(text)).toBe(o200k.encode(text, [], []).length);
        expect(bpeEncoder('cl100k_base').countNative(text)).toBe(cl100k.encode(text, [], []).length);
      }),
      { numRuns: 2000 },
    );
  });
});
