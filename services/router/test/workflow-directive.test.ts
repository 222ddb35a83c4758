import { describe, expect, it } from 'vitest';
import { nextAction, type WorkflowAction } from '../src/workflow/engine.ts';
import {
  buildDirective,
  FILE_STREAM_CONTINUATION_MARKER,
  FIRST_ROUND_SUMMARY_CONTEXT,
  PLANNED_HANDOFF_SCOPE_NOTE,
} from '../src/workflow/handoff-packet.ts';
import { reviewContent } from '../src/workflow/review-content.ts';
import {
  countWords,
  describeLengthRequirement,
  findLengthRequirement,
} from '../src/workflow/review-evidence.ts';
import { SCOPE_HEADING, scopeDirective } from '../src/workflow/scope-directive.ts';
import { draft, planOf, result, stateOf } from './workflow-fixtures.ts';

type Dispatch = Extract<WorkflowAction, { kind: 'dispatch' }>;
const dispatchAfter = (plan: ReturnType<typeof planOf>, results: ReturnType<typeof result>[]) =>
  nextAction(stateOf(results), plan, 12) as Dispatch;

describe('scope directive', () => {
  it('is rebuilt per agent: the hand-to-writer line goes to planning roles only', () => {
    const plan = planOf({ workflow_plan: 'standard', current_agent: 'planner', scope: '规划并写第一章' });
    const planner = dispatchAfter(plan, []).planned;
    const writer = dispatchAfter(plan, [result(0, 'planner')]).planned;
    const forPlanner = scopeDirective(plan, planner);
    expect(forPlanner.startsWith(SCOPE_HEADING)).toBe(true);
    expect(forPlanner).toContain('规划并写第一章');
    expect(forPlanner).toContain('交给 writer');
    expect(scopeDirective(plan, writer)).not.toContain('交给 writer');
  });

  it('spells out read-only, no-body, file types and clarify-first', () => {
    const readOnly = planOf({ read_only: true, requested_file_types: ['outline'] });
    const text = scopeDirective(readOnly, dispatchAfter(readOnly, []).planned);
    expect(text).toContain('只读请求');
    expect(text).toContain('outline');
    const noBody = planOf({ write_content: false, workflow_plan: 'standard', current_agent: 'planner' });
    expect(scopeDirective(noBody, dispatchAfter(noBody, []).planned)).toContain('不要正文');
    const vague = planOf({ workflow_agents: [] }, { clarify_first: true });
    expect(scopeDirective(vague, dispatchAfter(vague, []).planned)).toContain('request_clarification');
  });
});

describe('directive and handoff packet', () => {
  it('planned handoffs append the scope note and what was done', () => {
    const plan = planOf({ workflow_plan: 'standard', current_agent: 'planner', scope: '写第一章' });
    const prior = [
      result(0, 'planner', { files_written: [draft(321, 'outline')], final_text: '大纲好了。' }),
    ];
    const directive = buildDirective(plan, dispatchAfter(plan, prior).planned, prior);
    expect(directive).toContain(SCOPE_HEADING);
    expect(directive).toContain(PLANNED_HANDOFF_SCOPE_NOTE);
    expect(directive).toContain('[本轮已完成的工作]');
    expect(directive).toContain('321 字');
    expect(directive).toContain('大纲好了。');
  });

  it('continuations start with the marker; summary rounds carry the summary context', () => {
    const plan = planOf({});
    const cont = dispatchAfter(plan, [
      result(0, 'writer', { files_written: [draft(10)], ended_on_file_block: true }),
    ]);
    expect(buildDirective(plan, cont.planned, []).startsWith(FILE_STREAM_CONTINUATION_MARKER)).toBe(true);
    const first = planOf({}, { first_message: true });
    const summary = dispatchAfter(first, [
      result(0, 'writer', {
        files_written: [draft(900)],
        handoff: { to_agent: 'quality_reviewer', reason: 'x' },
      }),
    ]);
    expect(summary.planned.kind).toBe('summary');
    expect(buildDirective(first, summary.planned, [])).toContain(FIRST_ROUND_SUMMARY_CONTEXT);
  });

  it('review handoffs carry persisted counts, the length band, the content and the writer questions', () => {
    const plan = planOf({}, { mode: 'quality', message: '写一章3000字左右的开头' });
    const prior = [
      result(0, 'writer', {
        files_written: [draft(800)],
        final_text: '写好了。主角要不要改名？',
        held_text: '主角要不要改名？',
        author_questions: ['主角要不要改名？'],
      }),
    ];
    const review = dispatchAfter(plan, prior);
    expect(review.role).toBe('quality_reviewer');
    const directive = buildDirective(plan, review.planned, prior, {
      files: [
        {
          id: 'f-1',
          title: '第一章',
          updatedAt: '2025-01-01T00:00:00.000000Z',
          content: '雨夜。'.repeat(10),
        },
      ],
      words: new Map([['f-1', 20]]),
    });
    expect(directive).toContain('[本轮正文字数]\n- 《第一章》(id=f-1)：20 字');
    expect(directive).toContain('[作者的篇幅要求]\n作者原话：「3000字」；达标区间 2550–3450 字');
    expect(directive).toContain(
      '[待审查内容]\n来源：《第一章》 (id=f-1, updated_at=2025-01-01T00:00:00.000000Z) 以下是全文，不用再读取。',
    );
    expect(directive).toContain('[内容创作者要问作者的问题]\n- 主角要不要改名？');
  });
});

describe('review evidence', () => {
  it('counts CJK characters and Latin words', () => {
    expect(countWords('雨夜里的旧书店')).toBe(7);
    expect(countWords('The old bookshop, 雨夜 2024')).toBe(6);
  });

  it.each([
    ['写一章3000字左右', { kind: 'target', min: 2550, max: 3450 }],
    ['两千字', { kind: 'target', min: 1700, max: 2300 }],
    ['三千五百字的短篇', { kind: 'target', min: 2975, max: 4025 }],
    ['三千五字', { kind: 'target', min: 2975, max: 4025 }],
    ['一千零五十字', { kind: 'target', min: 893, max: 1208 }],
    ['一千零五字', { kind: 'target', min: 854, max: 1156 }],
    ['1.5万字', { kind: 'target', min: 12750, max: 17250 }],
    ['2000-3000字', { kind: 'range', min: 2000, max: 3000 }],
    ['两千到三千字', { kind: 'range', min: 2000, max: 3000 }],
    ['不少于2000字', { kind: 'min', min: 2000 }],
    ['5000字以上', { kind: 'min', min: 5000 }],
    ['不超过800字', { kind: 'max', max: 800 }],
    ['1000字以内', { kind: 'max', max: 1000 }],
    ['about 1500 words', { kind: 'target', min: 1275, max: 1725 }],
    ['at least 2000 words', { kind: 'min', min: 2000 }],
  ])('%s', (message, expected) => {
    expect(findLengthRequirement(message)).toMatchObject(expected);
  });

  it('says when there is no requirement, and that ranges are hard', () => {
    expect(findLengthRequirement('写第一章')).toBeUndefined();
    expect(describeLengthRequirement(undefined)).toContain('没有提篇幅要求');
    expect(describeLengthRequirement(findLengthRequirement('2000-3000字'))).toContain('硬要求');
  });

  it('splits the budget across files and marks what was left out', () => {
    const files = [
      { id: 'a', title: '短', updatedAt: 't1', content: 'x'.repeat(100) },
      { id: 'b', title: '长', updatedAt: 't2', content: 'y'.repeat(5000) },
    ];
    const text = reviewContent(files, 1000);
    expect(text).toContain('来源：《短》 (id=a, updated_at=t1) 以下是全文，不用再读取。');
    expect(text).toContain('来源：《长》 (id=b, updated_at=t2) 只附了前 900/5000 字。');
    expect(text).toContain('[已省略后 4100 字，没有核对：用 query_files(id="b") 按章节读取后再下结论]');
  });
});
