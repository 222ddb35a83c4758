import { createRequire } from 'node:module';
import type { Tiktoken, TiktokenBPE } from 'js-tiktoken/lite';
import { describe, expect, it } from 'vitest';
import { estimateTextTokens, warmTokenizer } from '../src/index.ts';
import { encoder } from '../src/token-estimate.ts';

const require = createRequire(import.meta.url);
const { Tiktoken: TiktokenClass } = require('js-tiktoken/lite') as typeof import('js-tiktoken/lite');

function libraryEncoder(name: 'o200k_base' | 'cl100k_base'): Tiktoken {
  return new TiktokenClass(require(`js-tiktoken/ranks/${name}`) as TiktokenBPE);
}

const SAMPLES = [
  '第一章 雨夜\n林晚推开门，风裹着雨点扑进来。她说：“你终于来了。”',
  'The quick brown fox jumps over the lazy dog. 1234567890 !@#$%^&*()',
  '  indented\tcode() { return [1, 2, 3]; }\n\n\n',
  '🙂 emoji, ｆｕｌｌｗｉｄｔｈ, ÄÖÜ ß, русский текст',
];

describe('tokenizer warm-up', () => {
  it('builds the table in slices, serving the event loop in between', async () => {
    // This file is its own module graph: nothing has built the o200k table yet.
    let turns = 0;
    const tick = setInterval(() => turns++, 0);
    await warmTokenizer('o200k_base');
    clearInterval(tick);
    // A build in one go would have let no timer run before it resolved.
    expect(turns).toBeGreaterThan(5);
  });

  it('counts exactly as the library-built encoder does, warmed or built on first use', async () => {
    await warmTokenizer('o200k_base');
    const o200k = libraryEncoder('o200k_base');
    for (const text of SAMPLES) expect(estimateTextTokens(text)).toBe(o200k.encode(text, [], []).length);
    // cl100k was never warmed: the first count builds it synchronously.
    const cl100k = libraryEncoder('cl100k_base');
    for (const text of SAMPLES) {
      expect(estimateTextTokens(text, 'cl100k_base')).toBe(cl100k.encode(text, [], []).length);
    }
  });

  it('fills the same rank tables as the library constructor', async () => {
    await warmTokenizer('cl100k_base');
    type Tables = { rankMap: Map<string, number>; textMap: Map<number, Uint8Array> };
    const ours = encoder('cl100k_base') as unknown as Tables;
    const library = libraryEncoder('cl100k_base') as unknown as Tables;
    expect(ours.rankMap.size).toBe(library.rankMap.size);
    expect(ours.textMap.size).toBe(library.textMap.size);
    for (const [bytes, rank] of library.rankMap) expect(ours.rankMap.get(bytes)).toBe(rank);
    const text = SAMPLES.join('\n');
    expect(encoder('cl100k_base').encode(text)).toEqual(libraryEncoder('cl100k_base').encode(text));
    expect(encoder('cl100k_base').decode(encoder('cl100k_base').encode(text))).toBe(text);
  });
});
