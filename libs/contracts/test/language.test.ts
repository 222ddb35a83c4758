import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { replyLanguage } from '../src/index.ts';

describe('replyLanguage: the author latest message decides, the UI language breaks ties', () => {
  it.each<[string, 'zh' | 'en', 'zh' | 'en']>([
    ['写第三章', 'en', 'zh'],
    ['Write chapter three', 'zh', 'en'],
    // Ideographs count double: a Chinese request naming an English title stays Chinese.
    ['把 Rain 这一章改短', 'en', 'zh'],
    ['把《Midnight Rain Over The Harbour》改短', 'en', 'en'],
    ['Make 林晚 braver', 'zh', 'en'],
    ['第3章', 'en', 'zh'],
    ['3000', 'zh', 'zh'],
    ['3000', 'en', 'en'],
    ['👍！', 'en', 'en'],
    ['', 'zh', 'zh'],
  ])('%j with UI %s → %s', (message, ui, expected) => {
    expect(replyLanguage(message, ui)).toBe(expected);
  });

  it('ignores the UI language whenever the message has letters or ideographs', () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1 }), (message) => {
        const letters = /[A-Za-z\u3400-\u9fff]/.test(message);
        const zh = replyLanguage(message, 'zh');
        const en = replyLanguage(message, 'en');
        return letters ? zh === en : zh === 'zh' && en === 'en';
      }),
    );
  });
});

describe('prompts never ask the model for citations (docs/protocol.md, sources)', () => {
  const root = join(import.meta.dirname, '../../..');
  const PROMPT_FILES = [
    'services/context/src/prompts.ts',
    'libs/agent-runtime/src/protocol.ts',
    'services/router/src/routing/router-prompt.ts',
    'services/router/src/workflow/handoff-packet.ts',
  ];
  it.each(PROMPT_FILES)('%s asks for no citation', (path) => {
    const text = readFileSync(join(root, path), 'utf8');
    // Quoted strings only: comments may explain why there is no such instruction.
    const strings = text.match(/(['`])(?:\\.|(?!\1)[^\\])*\1/g) ?? [];
    const asking = strings.filter((value) =>
      /标注(来源|出处)|注明(来源|出处)|引用来源|cite|citation/i.test(value),
    );
    expect(asking).toEqual([]);
  });
});
