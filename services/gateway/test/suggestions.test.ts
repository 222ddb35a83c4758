import { describe, expect, it } from 'vitest';
import { buildSuggestionMessages, parseSuggestions } from '../src/suggestions.ts';

describe('suggestions', () => {
  it('reads the JSON array a model answers, even wrapped in a fence or a sentence', () => {
    expect(parseSuggestions('["继续写第二章","检查节奏"]')).toEqual(['继续写第二章', '检查节奏']);
    expect(parseSuggestions('好的：\n```json\n["写第三章", "写第三章", 7, " 补设定 "]\n```')).toEqual([
      '写第三章',
      '补设定',
    ]);
  });

  it('falls back to one suggestion per line and keeps at most five', () => {
    expect(parseSuggestions('1. 写第二章\n- 检查节奏\n\n3、补一段往事')).toEqual([
      '写第二章',
      '检查节奏',
      '补一段往事',
    ]);
    expect(parseSuggestions(Array.from({ length: 9 }, (_, index) => `建议${index}`).join('\n'))).toHaveLength(
      5,
    );
  });

  it('prompts with the project, its files and the latest conversation', () => {
    const [system, user] = buildSuggestionMessages({
      projectTitle: '雨夜书店',
      files: [{ title: '第一章', fileType: 'draft' }],
      history: [
        { role: 'user', content: '写第一章' },
        { role: 'assistant', content: '第一章写完了' },
      ],
    });
    expect(system!.role).toBe('system');
    expect(user!.content).toContain('雨夜书店');
    expect(user!.content).toContain('第一章 (draft)');
    expect(user!.content).toContain('作者：写第一章');
  });
});
