import { Tiktoken } from 'js-tiktoken/lite';
import o200k from 'js-tiktoken/ranks/o200k_base';
import { describe, expect, it } from 'vitest';
import { prose } from '../../../test/support/chinese-project.ts';
import { createParagraphCounter, estimateTextTokens } from '../src/index.ts';

// The tokenizer itself, with no cache in between: what every count must equal.
const tokenizer = new Tiktoken(o200k);
const exact = (text: string) => tokenizer.encode(text, [], []).length;

// Characters that decide where the pre-tokenizer cuts: newlines before and after whitespace,
// '/', punctuation, letters, digits, marks, surrogates and a special-token lookalike.
const ALPHABET = [
  '\n',
  '\n',
  '\r\n',
  ' ',
  '\t',
  '\u3000',
  '/',
  'a',
  'A',
  "'s",
  '1',
  '。',
  '，',
  '林晚',
  '「',
  '#',
  '- ',
  '😀',
  'e\u0301',
  '<|endoftext|>',
];

describe('createParagraphCounter', () => {
  it('counts exactly what the tokenizer counts, for whole texts and for their prefixes', () => {
    const count = createParagraphCounter(exact, 64);
    let seed = 7;
    const next = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
      return seed / 2_147_483_648;
    };
    for (let index = 0; index < 2_000; index++) {
      let text = '';
      for (let part = 0; part < 1 + next() * 20; part++)
        text += ALPHABET[Math.floor(next() * ALPHABET.length)];
      expect(count(text), JSON.stringify(text)).toBe(exact(text));
      expect(estimateTextTokens(text), JSON.stringify(text)).toBe(exact(text));
    }
    const chapter = prose(11, 3_000);
    for (const cut of [0, 1, 170, 999, 1_500, 2_999, 3_000]) {
      expect(count(chapter.slice(0, cut))).toBe(exact(chapter.slice(0, cut)));
    }
  });

  it('keeps the most recently used paragraphs within its bound', () => {
    const counted: string[] = [];
    const count = createParagraphCounter((text) => {
      counted.push(text);
      return text.length;
    }, 2);
    for (const text of ['a', 'b', 'a', 'c', 'a', 'b']) count(text);
    expect(counted).toEqual(['a', 'b', 'c', 'b']);
  });
});
