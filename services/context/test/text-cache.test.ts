import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { lowerPerCharacter, mayHold, PAIR_FILTER_BITS, pairFilter } from '../src/file-search.ts';
import { createTextCache } from '../src/text-cache.ts';

// Two bytes a character: a 10-character text is 20 bytes.
const text = (character: string, length = 10) => character.repeat(length);

describe('the text cache', () => {
  it('answers only for the version it holds', () => {
    const cache = createTextCache(1_000);
    cache.put('a', 3, text('x'));
    expect(cache.get('a', 3)?.content).toBe(text('x'));
    expect(cache.get('a', 4)).toBeUndefined();
    expect(cache.get('b', 3)).toBeUndefined();
    expect(cache.stats()).toMatchObject({ entries: 1, bytes: 20, hits: 1, misses: 2 });
  });

  it('keeps the newer version when two reads of one file come back out of order', () => {
    const cache = createTextCache(1_000);
    cache.put('a', 5, text('n'));
    expect(cache.put('a', 4, text('o')).content).toBe(text('o'));
    expect(cache.get('a', 5)?.content).toBe(text('n'));
    expect(cache.get('a', 4)).toBeUndefined();
    cache.put('a', 6, text('m', 5));
    expect(cache.stats()).toMatchObject({ entries: 1, bytes: 10 });
  });

  it('lets the least recently used texts go first, within its bytes', () => {
    const cache = createTextCache(60);
    cache.put('a', 1, text('a'));
    cache.put('b', 1, text('b'));
    cache.put('c', 1, text('c'));
    cache.get('a', 1);
    cache.put('d', 1, text('d'));
    expect(cache.get('b', 1)).toBeUndefined();
    expect(['a', 'c', 'd'].map((id) => cache.get(id, 1)?.content)).toEqual([text('a'), text('c'), text('d')]);
    expect(cache.stats().bytes).toBe(60);
  });

  it('hands back a text too big to keep without keeping it, and keeps nothing at 0 bytes', () => {
    const cache = createTextCache(15);
    expect(cache.put('a', 1, text('a')).content).toBe(text('a'));
    expect(cache.get('a', 1)).toBeUndefined();
    const none = createTextCache(0);
    none.put('a', 1, 'x');
    expect(none.stats()).toMatchObject({ entries: 0, bytes: 0 });
  });

  it('counts a lower-cased copy once it is made, and makes it once', () => {
    let lowered = 0;
    const cache = createTextCache(50, (value) => {
      lowered++;
      return lowerPerCharacter(value);
    });
    const entry = cache.put('a', 1, text('A'));
    expect(entry.lowered()).toBe(text('a'));
    expect(entry.lowered()).toBe(text('a'));
    expect(lowered).toBe(1);
    expect(cache.stats().bytes).toBe(40);
    // A text already in lower case is its own copy and costs nothing more.
    cache.put('b', 1, 'abc').lowered();
    expect(cache.stats().bytes).toBe(46);
  });

  it('counts a pair filter once it is made, and makes it once', () => {
    const cache = createTextCache(10_000);
    const entry = cache.put('a', 1, text('林'));
    expect(entry.pairs()).toBe(entry.pairs());
    expect(cache.stats().bytes).toBe(20 + PAIR_FILTER_BITS / 8);
  });
});

describe('lower case one character at a time', () => {
  it('maps İ and Σ to one character each, as towlower does, and the rest as toLowerCase', () => {
    expect(lowerPerCharacter('İSTANBUL')).toBe('istanbul');
    expect(lowerPerCharacter('ΟΔΟΣ Σ')).toBe('οδοσ σ');
    expect(lowerPerCharacter('Lin WAN 林晚 Ａ')).toBe('lin wan 林晚 ａ');
    expect(lowerPerCharacter('İΣ').length).toBe(2);
  });
});

describe('the pair filter', () => {
  it('never rules out a term the text holds', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: fc.constantFrom(...'铜铃钟楼林晚雨夜abAB0 。\n'.split('')), maxLength: 200 }),
        fc.nat(),
        fc.integer({ min: 1, max: 6 }),
        (content, start, length) => {
          const from = content.length === 0 ? 0 : start % content.length;
          expect(mayHold(pairFilter(content), content.slice(from, from + length))).toBe(true);
        },
      ),
    );
    // Whole code points from beyond the BMP too: a term is cut into code units like the text.
    expect(mayHold(pairFilter('前𠀀后'), '𠀀后')).toBe(true);
  });

  it('rules out most terms a text does not hold', () => {
    const filter = pairFilter('林晚在钟楼下听见铜铃。'.repeat(50));
    expect(mayHold(filter, '钟楼')).toBe(true);
    const absent = ['雨夜', '旧书', '温言', '电台', '蜡烛', '沈砚', '渡口', '灯塔'];
    expect(absent.filter((term) => mayHold(filter, term)).length).toBeLessThanOrEqual(1);
  });
});
