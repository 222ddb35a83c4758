import { describe, expect, it } from 'vitest';
import { countingLongTextsOnce } from '../src/text-counts.ts';

describe('counting long texts once', () => {
  const counted: string[] = [];
  const count = (text: string) => {
    counted.push(text);
    return text.length;
  };

  it('counts a long text once and answers again from memory, a short one every time', () => {
    counted.length = 0;
    const counter = countingLongTextsOnce(count, { minChars: 10, maxTexts: 2, maxChars: 1_000 });
    const long = '林'.repeat(20);
    expect([counter(long), counter(long), counter('短'), counter('短')]).toEqual([20, 20, 1, 1]);
    expect(counted).toEqual([long, '短', '短']);
  });

  it('keeps at most maxTexts, the least recently used out first', () => {
    counted.length = 0;
    const counter = countingLongTextsOnce(count, { minChars: 1, maxTexts: 2, maxChars: 1_000 });
    counter('aa');
    counter('bb');
    counter('aa');
    counter('cc');
    counter('aa');
    counter('bb');
    expect(counted).toEqual(['aa', 'bb', 'cc', 'bb']);
  });

  it('keeps at most maxChars of texts, and never one longer than that', () => {
    counted.length = 0;
    const counter = countingLongTextsOnce(count, { minChars: 1, maxTexts: 100, maxChars: 5 });
    counter('aaa');
    counter('bbb');
    counter('aaa');
    counter('cccccc');
    counter('cccccc');
    expect(counted).toEqual(['aaa', 'bbb', 'aaa', 'cccccc', 'cccccc']);
  });
});
