import { describe, expect, it } from 'vitest';
import { nextAction, type WorkflowAction } from '../src/workflow/engine.ts';
import { readWithin } from '../src/workflow/evidence-reads.ts';
import { buildDirective } from '../src/workflow/handoff-packet.ts';
import { changedSpan, citedFiles, reviewContent, windowAround } from '../src/workflow/review-content.ts';
import { draft, planOf, result, stateOf } from './workflow-fixtures.ts';

type Dispatch = Extract<WorkflowAction, { kind: 'dispatch' }>;

// A long chapter whose middle this request rewrote: 30 numbered paragraphs of 100 chars each.
const paragraph = (index: number, text = '旧') =>
  `第${String(index).padStart(2, '0')}段${text.repeat(100 - 4)}`.slice(0, 100);
const chapter = (changed: Record<number, string>) =>
  Array.from({ length: 30 }, (_, index) => paragraph(index, changed[index] ?? '旧')).join('\n');

describe('the changed span of a write', () => {
  it('is what lies between the common prefix and suffix, in the new text', () => {
    expect(changedSpan('abcdef', 'abXYef')).toEqual({ start: 2, end: 4 });
    expect(changedSpan('', 'new text')).toEqual({ start: 0, end: 8 });
    expect(changedSpan('same', 'same')).toEqual({ start: 4, end: 4 });
    // An insertion: the span is the inserted part.
    expect(changedSpan('head tail', 'head NEW tail')).toEqual({ start: 5, end: 9 });
    // A deletion leaves an empty span at the cut.
    expect(changedSpan('head CUT tail', 'head tail')).toEqual({ start: 5, end: 5 });
  });

  it('is shown inside a window of the share, cut at line breaks, never cut itself when it fits', () => {
    const text = chapter({ 20: '新' });
    const span = changedSpan(chapter({}), text);
    expect(text.slice(span.start, span.end)).toContain('新');
    const window = windowAround(text, span, 500);
    expect(window.end - window.start).toBeLessThanOrEqual(500);
    expect(window.start).toBeLessThanOrEqual(span.start);
    expect(window.end).toBeGreaterThanOrEqual(span.end);
    expect(text[window.start - 1]).toBe('\n');
    // A span longer than the window: its start is shown.
    expect(windowAround(text, { start: 1000, end: 2500 }, 300)).toEqual({ start: 1000, end: 1300 });
  });
});

describe('「待审查内容」 of a long file', () => {
  it('shows the segment this request changed, not the head, and marks both omitted sides', () => {
    const before = chapter({});
    const after = chapter({ 20: '新' });
    const text = reviewContent([{ id: 'c', title: '第五章', updatedAt: 't', content: after, before }], 600);
    expect(text).toContain(paragraph(20, '新'));
    expect(text).not.toContain(paragraph(0));
    expect(text).toMatch(/只附了本请求改动的部分：第 \d+–\d+ 字（共 3029 字；本请求改动的是第 \d+–\d+ 字）/);
    expect(text).toMatch(/\[已省略前 \d+ 字，没有核对：用 query_files\(id="c"\) 按章节读取后再下结论\]/);
    expect(text).toMatch(/\[已省略后 \d+ 字，没有核对：用 query_files\(id="c"\) 按章节读取后再下结论\]/);
  });

  it('keeps the whole text when it fits, and the head for a file the run created', () => {
    const whole = reviewContent([{ id: 's', title: '短', updatedAt: 't', content: '短文。', before: '' }]);
    expect(whole).toContain('以下是全文，不用再读取。\n短文。');
    const created = reviewContent(
      [{ id: 'n', title: '新章', updatedAt: 't', content: 'x'.repeat(2000), before: '' }],
      500,
    );
    expect(created).toContain('只附了前 500/2000 字。');
  });

  it('names a file that could not be read in time instead of leaving it out silently', () => {
    const text = reviewContent([], 500, [{ id: 'slow', title: '第九章' }]);
    expect(text).toContain('《第九章》 (id=slow) 没能在读取时限内读到');
    expect(text).toContain('query_files(id="slow")');
    const plan = planOf({}, { mode: 'quality', message: '写第九章' });
    const prior = [result(0, 'writer', { files_written: [draft(900)] })];
    const review = nextAction(stateOf(prior), plan, 12) as Dispatch;
    expect(review.planned.review).toBe(true);
    const directive = buildDirective(plan, review.planned, prior, {
      files: [],
      words: new Map(),
      unread: [{ id: 'slow', title: '第九章' }],
    });
    expect(directive).toContain('[本轮正文字数]\n- 《第九章》(id=slow)：没能在读取时限内读到，字数没有核对');
    expect(directive).toContain('[待审查内容]\n来源：《第九章》 (id=slow) 没能在读取时限内读到');
  });
});

describe('the evidence read limit', () => {
  it('returns what was read by the limit and names the rest as late', async () => {
    const never = new Promise<string>(() => {});
    const reads = await readWithin(
      [
        { key: 'fast', read: async () => 'text' },
        { key: 'slow', read: () => never },
        { key: 'broken', read: async () => Promise.reject(new Error('db down')) },
      ],
      0,
    );
    expect([...reads.done]).toEqual([['fast', 'text']]);
    expect(reads.late).toEqual(['slow', 'broken']);
  });
});

describe('「返修对象当前正文」', () => {
  const files = [
    { id: 'f-1', title: '第一章' },
    { id: 'f-2', title: '第二章' },
    { id: 'f-3', title: '人物表' },
  ];

  it('cites the files a review names by id or title, and no others', () => {
    expect(citedFiles('第二章的结尾太仓促；另见 id=f-3。', files).map((file) => file.id)).toEqual([
      'f-2',
      'f-3',
    ]);
    expect(citedFiles('整体不错。', files)).toEqual([]);
  });

  it('goes to the revising writer with the current text of the cited files only', () => {
    const plan = planOf({}, { mode: 'quality', message: '写第一章' });
    const prior = [
      result(0, 'writer', { files_written: [draft(800)] }),
      result(1, 'quality_reviewer', {
        final_text: '《第一章》开头节奏拖沓，请压缩第一段。',
        handoff: { to_agent: 'writer', reason: '返修' },
      }),
    ];
    const revision = nextAction(stateOf(prior), plan, 12) as Dispatch;
    expect(revision.planned.revision).toBe(true);
    const directive = buildDirective(plan, revision.planned, prior, {
      files: [{ id: 'f-800-draft', title: '第一章', updatedAt: 't9', content: '雨夜。当前的正文。' }],
      words: new Map(),
    });
    expect(directive).toContain('[审稿意见]\n《第一章》开头节奏拖沓');
    expect(directive).toContain(
      '[返修对象当前正文]\n来源：《第一章》 (id=f-800-draft, updated_at=t9) 以下是全文，不用再读取。\n雨夜。当前的正文。',
    );
    const none = buildDirective(plan, revision.planned, prior, { files: [], words: new Map() });
    expect(none).toContain('[返修对象当前正文]\n（审稿意见没有点名本轮写过的文件');
  });
});
