import { describe, expect, it } from 'vitest';
import type { WorkflowAction } from '../src/workflow/engine.ts';
import { buildDirective } from '../src/workflow/handoff-packet.ts';
import { chaptersPlannedInChat, OUTLINE_CORRECTION_CONTEXT } from '../src/workflow/outline-correction.ts';
import { dispatchedRoles, draft, drive, planOf } from './workflow-fixtures.ts';

type Dispatch = Extract<WorkflowAction, { kind: 'dispatch' }>;
const dispatches = (actions: WorkflowAction[]) =>
  actions.filter((action): action is Dispatch => action.kind === 'dispatch');

const CHAT_PLAN =
  '好的，规划如下：\n\n## 第一章 雨夜\n林晚回到渡口。\n\n## 第二章 旧信\n她发现父亲的信。\n\n第三章：对峙\n与船主摊牌。';
const standard = (requested: string[]) =>
  planOf({ workflow_plan: 'standard', current_agent: 'planner', requested_file_types: requested });

describe('the planner outline correction round', () => {
  it.each<[string, number]>([
    [CHAT_PLAN, 3],
    ['1. 第一章 开端\n2. 第二章 发展', 2],
    ['Chapter 1 - Rain\nChapter 2 - Letters', 2],
    ['我在第三章里加了伏笔，第四章会回收。', 0],
    ['## 第五章 渡口\n只有一章的细纲。', 1],
  ])('counts the chapters a chat plan lays out (%#)', (text, count) => {
    expect(chaptersPlannedInChat(text)).toBe(count);
  });

  it('runs the planner once more, before the writer, when an outline was asked and only chat came', () => {
    const { actions } = drive(standard(['outline']), (action) =>
      action.role === 'planner' ? { final_text: CHAT_PLAN } : {},
    );
    expect(dispatchedRoles(actions)).toEqual(['planner', 'planner', 'writer']);
    const correction = dispatches(actions)[1]!;
    expect(correction.planned.kind).toBe('outline_correction');
    expect(correction.handoff).toBeUndefined();
    expect(buildDirective(standard(['outline']), correction.planned, [])).toContain(
      OUTLINE_CORRECTION_CONTEXT,
    );
  });

  it('corrects only once, even when the second answer is chat again', () => {
    const { actions } = drive(
      planOf({
        workflow_plan: 'standard',
        current_agent: 'planner',
        requested_file_types: ['outline'],
        write_content: false,
      }),
      () => ({
        final_text: CHAT_PLAN,
      }),
    );
    expect(dispatchedRoles(actions)).toEqual(['planner', 'planner']);
    expect(actions.at(-1)).toEqual({ kind: 'finish', outcome: { terminal: 'complete' } });
  });

  it('does nothing without the typed outline request, after an outline file, or for a one-chapter plan', () => {
    const cases: Array<[string[], Record<string, unknown>]> = [
      [[], { final_text: CHAT_PLAN }],
      [['draft'], { final_text: CHAT_PLAN }],
      [['outline'], { final_text: CHAT_PLAN, files_written: [draft(800, 'outline')] }],
      [['outline'], { final_text: '## 第五章 渡口\n细纲。' }],
    ];
    for (const [requested, planner] of cases) {
      const { actions } = drive(standard(requested), (action) => (action.role === 'planner' ? planner : {}));
      expect(dispatchedRoles(actions), JSON.stringify([requested, planner])).toEqual(['planner', 'writer']);
    }
  });

  it('leaves other roles alone: a writer that plans in chat is not corrected', () => {
    const { actions } = drive(
      planOf({ workflow_plan: 'quick', current_agent: 'writer', requested_file_types: ['outline'] }),
      () => ({ final_text: CHAT_PLAN }),
    );
    expect(dispatchedRoles(actions)).toEqual(['writer']);
  });
});
