import { describe, expect, it } from 'vitest';
import { chapterNumber, parseChineseNumber } from '../src/chapters.ts';
import { type CandidateFile, chapterPlan, prioritize } from '../src/prioritizer.ts';
import { nameVariants, queryTerms } from '../src/query-terms.ts';

const file = (id: string, title: string, fileType: string, folder = ''): CandidateFile => ({
  id,
  title,
  fileType,
  folder,
  chars: 1000,
});

const FILES: CandidateFile[] = [
  file('c1', '林晚', 'character', '角色'),
  file('c2', '沈砚', 'character', '角色'),
  file('s1', '旧书店', 'setting', '设定'),
  file('s2', '钟楼', 'setting', '设定'),
  file('o1', '全书大纲', 'outline'),
  file('d1', '第一章 雨夜', 'draft', '正文'),
  file('d2', '第二章 旧信', 'draft', '正文'),
  file('d3', '第三章 铜铃', 'draft', '正文'),
  file('d4', '第四章 渡口', 'draft', '正文'),
  file('d5', '第五章 钟声', 'draft', '正文'),
  file('n1', '灵感 1', 'note', '灵感'),
];

const base = { files: FILES, attachedIds: [], reviewTargetIds: [], sceneText: '' };

describe('chapter numbers', () => {
  it('reads Chinese and Arabic chapter numbers', () => {
    expect(parseChineseNumber('十二')).toBe(12);
    expect(parseChineseNumber('一百零一')).toBe(101);
    expect(parseChineseNumber('两千三百')).toBe(2300);
    expect(chapterNumber('第一百一十章 渡口')).toBe(110);
    expect(chapterNumber('第12章')).toBe(12);
    expect(chapterNumber('Chapter 7: Rain')).toBe(7);
    expect(chapterNumber('03 雨夜')).toBe(3);
    expect(chapterNumber('全书大纲')).toBeNull();
  });

  it('finds the previous chapter and siblings from the focus, the request, or the latest chapter', () => {
    const fromFocus = chapterPlan({ ...base, message: '润色', focusId: 'd3' });
    expect(fromFocus.previous?.id).toBe('d2');
    expect(fromFocus.siblings.map((sibling) => sibling.id)).toEqual(['d4', 'd1', 'd5']);
    expect(chapterPlan({ ...base, message: '写第五章', focusId: null }).previous?.id).toBe('d4');
    // No focus, no number: the next chapter after the latest, so the latest is "previous".
    expect(chapterPlan({ ...base, message: '继续写', focusId: null }).previous?.id).toBe('d5');
  });
});

describe('prioritize', () => {
  it('orders CRITICAL → CONSTRAINT (characters and core settings, outline, previous chapter) → RELEVANT → INSPIRATION', () => {
    const candidates = prioritize({
      ...base,
      message: '润色这一章',
      focusId: 'd3',
      sceneText: '林晚听见钟楼的钟响了',
    });
    expect(candidates.map((candidate) => [candidate.file.id, candidate.tier, candidate.source])).toEqual([
      ['d3', 'critical', 'focus'],
      // In play in the scene (focus + previous chapter): characters before settings.
      ['c1', 'constraint', 'character'],
      ['s2', 'constraint', 'setting'],
      ['o1', 'constraint', 'outline'],
      ['d2', 'constraint', 'previous_chapter'],
      ['d4', 'relevant', 'sibling_chapter'],
      ['d1', 'relevant', 'sibling_chapter'],
      ['d5', 'relevant', 'sibling_chapter'],
      ['c2', 'relevant', 'character'],
      ['s1', 'relevant', 'setting'],
      ['n1', 'inspiration', 'note'],
    ]);
  });

  it('boosts characters and settings named in the request ahead of the others', () => {
    const candidates = prioritize({
      ...base,
      message: '让沈砚去旧书店',
      focusId: null,
      sceneText: '林晚和沈砚',
    });
    const constraint = candidates
      .filter((candidate) => candidate.tier === 'constraint')
      .map((c) => c.file.id);
    expect(constraint).toEqual(['c2', 's1', 'c1', 'o1', 'd5']);
  });

  it('puts attachments, quoted titles and (for the reviewer) review targets in CRITICAL, each once', () => {
    const candidates = prioritize({
      ...base,
      message: '对照《全书大纲》看看',
      focusId: 'd1',
      attachedIds: ['d1', 'c2'],
      reviewTargetIds: ['d5'],
    });
    const critical = candidates.filter((candidate) => candidate.tier === 'critical');
    expect(critical.map((candidate) => [candidate.file.id, candidate.source])).toEqual([
      ['d1', 'focus'],
      ['d5', 'review_target'],
      ['c2', 'attached'],
      ['o1', 'reference'],
    ]);
    expect(new Set(candidates.map((candidate) => candidate.file.id)).size).toBe(candidates.length);
  });
});

describe('query terms', () => {
  it('cuts Chinese into bigrams, keeps longer words of other scripts, skips function-character pairs', () => {
    expect(queryTerms('林晚在旧书店')).toEqual(['林晚', '晚在', '在旧', '旧书', '书店']);
    expect(queryTerms('写一下 the lighthouse')).toEqual(['the', 'lighthouse']);
    expect(nameVariants('人物：林晚（主角）')).toEqual(['人物：林晚（主角）', '林晚']);
  });
});
