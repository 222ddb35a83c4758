import { createParagraphCounter, estimateTextTokens } from '@quill/llm';
import { describe, expect, it } from 'vitest';
import { fixedPromptTexts } from '../src/compiler.ts';
import { systemPrompt } from '../src/prompts.ts';

const exact = (text: string) => estimateTextTokens(text);

describe('fixedPromptTexts (counted at start-up)', () => {
  it('tokenises a paragraph it has seen only once', () => {
    const counted: string[] = [];
    const count = createParagraphCounter((text) => {
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
});
