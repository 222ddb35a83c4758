import { estimateTextTokens } from '@quill/llm';
import { describe, expect, it } from 'vitest';
import { prose } from '../../../test/support/chinese-project.ts';
import { fixedPromptTexts } from '../src/compiler.ts';
import { systemPrompt } from '../src/prompts.ts';
import { createTokenCounter } from '../src/token-counter.ts';

const exact = (text: string) => estimateTextTokens(text);

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

describe('createTokenCounter', () => {
  it('counts exactly what the tokenizer counts, for whole texts and for their prefixes', () => {
    const count = createTokenCounter(exact, 64);
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
    }
    const chapter = prose(11, 3_000);
    for (const cut of [0, 1, 170, 999, 1_500, 2_999, 3_000]) {
      expect(count(chapter.slice(0, cut))).toBe(exact(chapter.slice(0, cut)));
    }
  });

  it('tokenises a paragraph it has seen only once', () => {
    const counted: string[] = [];
    const count = createTokenCounter((text) => {
      counted.push(text);
      return exact(text);
    });
    const catalog = [{ name: 'scene-craft', description: '场景写作' }];
    for (const text of fixedPromptTexts()) count(text);
    counted.length = 0;
    expect(count(systemPrompt({ title: '雨夜书店', projectType: 'novel' }, catalog))).toBe(
      exact(systemPrompt({ title: '雨夜书店', projectType: 'novel' }, catalog)),
    );
    // Only the project's own line and its catalog entry are new.
    expect(counted).toEqual(['当前作品：《雨夜书店》（类型：novel）。\n', '- scene-craft：场景写作']);
  });

  it('keeps the most recently used paragraphs within its bound', () => {
    const counted: string[] = [];
    const count = createTokenCounter((text) => {
      counted.push(text);
      return text.length;
    }, 2);
    for (const text of ['a', 'b', 'a', 'c', 'a', 'b']) count(text);
    expect(counted).toEqual(['a', 'b', 'c', 'b']);
  });
});
