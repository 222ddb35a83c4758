import { Tiktoken } from 'js-tiktoken/lite';
import o200k from 'js-tiktoken/ranks/o200k_base';
import { describe, expect, it } from 'vitest';
import { prose } from '../../../test/support/chinese-project.ts';
import { createParagraphCounter, estimateTextTokens } from '../src/index.ts';
import { countedParts, LONGEST_COUNTED_PIECE, precountTokens, promptTexts } from '../src/token-estimate.ts';
import { PRE_TOKENIZER_PIECES } from './pre-tokenizer-pieces.ts';

// The tokenizer itself, with no cache in between: what every count must equal.
const tokenizer = new Tiktoken(o200k);
const exact = (text: string) => tokenizer.encode(text, [], []).length;

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
        text += PRE_TOKENIZER_PIECES[Math.floor(next() * PRE_TOKENIZER_PIECES.length)];
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

describe('a run without breaks', () => {
  const run = (length: number) =>
    '雨夜里旧书店的灯还亮着林晚推门进去老人抬头看了她一眼'.repeat(Math.ceil(length / 26)).slice(0, length);

  it('is tokenised in parts no longer than the bound, so the merge stays linear', () => {
    const text = `第一章\n${run(1_000)}。${'-'.repeat(300)}\nThe end 😀${'😀'.repeat(100)}${'\u3000'.repeat(200)}${'\n'.repeat(100)}末`;
    const parts = countedParts(text);
    expect(parts.join('')).toBe(text);
    for (const part of parts) {
      expect(part).not.toMatch(new RegExp(`[\\p{L}\\p{M}]{${LONGEST_COUNTED_PIECE + 1}}`, 'u'));
      expect(part).not.toMatch(new RegExp(`[^\\s\\p{L}\\p{N}]{${LONGEST_COUNTED_PIECE + 1}}`, 'u'));
      expect(part).not.toMatch(new RegExp(`\\s{${LONGEST_COUNTED_PIECE + 1}}`, 'u'));
    }
    // A surrogate pair is never cut in half.
    expect(parts.every((part) => !/^[\uDC00-\uDFFF]|[\uD800-\uDBFF]$/.test(part))).toBe(true);
    // Text with no such run is one part: counted exactly as before.
    expect(countedParts(prose(3, 2_000))).toEqual([prose(3, 2_000)]);
  });

  it('counts at most a token per cut above the tokenizer, never below', () => {
    const text = run(600);
    const cuts = Math.ceil(600 / LONGEST_COUNTED_PIECE) - 1;
    const counted = estimateTextTokens(text);
    expect(counted).toBeGreaterThanOrEqual(exact(text));
    expect(counted).toBeLessThanOrEqual(exact(text) + cuts);
  });
});

describe('precountTokens', () => {
  it('fills the cache in slices that let the event loop run, and the counts are the same', async () => {
    const texts = [prose(5, 1_500), `新的一段\n${prose(6, 800)}`, ''];
    let otherWorkRan = false;
    setImmediate(() => {
      otherWorkRan = true;
    });
    // A slice of 0 ms: the loop gets a turn after every paragraph.
    await precountTokens(texts, 'o200k_base', 0);
    expect(otherWorkRan).toBe(true);
    for (const text of texts) expect(estimateTextTokens(text)).toBe(exact(text));
  });

  it('lists the texts a prompt estimate counts', () => {
    const messages = [
      { role: 'user' as const, content: '写第一章' },
      {
        role: 'assistant' as const,
        content: null,
        tool_calls: [
          {
            id: 'c1',
            type: 'function' as const,
            function: { name: 'create_file', arguments: '{"title":"第一章"}' },
          },
        ],
      },
    ];
    const tools = [
      { type: 'function' as const, function: { name: 'create_file', parameters: { type: 'object' } } },
    ];
    expect([...promptTexts(messages, tools)]).toEqual([
      JSON.stringify(tools),
      '写第一章',
      '',
      'create_file',
      '{"title":"第一章"}',
    ]);
  });
});
