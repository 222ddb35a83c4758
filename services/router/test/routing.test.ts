import { describe, expect, it } from 'vitest';
import { deterministicRoute, isContinueOnly, isVagueEditRequest } from '../src/routing/continuations.ts';
import { MAX_SCOPE_CHARS, parseRouterAnswer, planWorkflowAgents } from '../src/routing/router-decision.ts';
import { buildRouterUserMessage } from '../src/routing/router-prompt.ts';
import type { RoutingRecord } from '../src/routing/routing-record.ts';

describe('parseRouterAnswer', () => {
  it('reads strict JSON, JSON in fences or prose, and recomputes the plan', () => {
    const parsed = parseRouterAnswer(
      '好的：\n```json\n{"current_agent":"planner","workflow_plan":"full","write_content":true,"read_only":false,"scope":"写开篇","requested_file_types":["outline","draft"],"workflow_agents":["writer"]}\n```',
    );
    expect(parsed).toEqual({
      ok: true,
      decision: {
        current_agent: 'planner',
        workflow_plan: 'full',
        workflow_agents: ['planner', 'hook_designer', 'writer'],
        write_content: true,
        read_only: false,
        scope: '写开篇',
        requested_file_types: ['outline', 'draft'],
      },
    });
  });

  it('infers the plan from the agent and the agent from the plan', () => {
    expect(parseRouterAnswer('{"current_agent":"hook_designer"}')).toMatchObject({
      ok: true,
      decision: {
        workflow_plan: 'hook_focus',
        workflow_agents: ['hook_designer', 'writer'],
        write_content: null,
      },
    });
    expect(parseRouterAnswer('{"workflow_plan":"review_only"}')).toMatchObject({
      ok: true,
      decision: { current_agent: 'quality_reviewer' },
    });
  });

  it('cuts the scope at MAX_SCOPE_CHARS whatever the model wrote', () => {
    const parsed = parseRouterAnswer(JSON.stringify({ current_agent: 'writer', scope: '长'.repeat(200) }));
    expect(parsed.ok && [...parsed.decision.scope].length).toBe(MAX_SCOPE_CHARS);
  });

  it.each([
    ['not json at all'],
    ['{"current_agent":"editor","workflow_plan":"quick"}'],
    ['{"workflow_plan":"epic"}'],
    ['{"scope":"nothing else"}'],
    ['{"current_agent": "writer", '],
    ['{"read_only":"yes","current_agent":"writer"}'],
  ])('rejects %s', (text) => {
    expect(parseRouterAnswer(text).ok).toBe(false);
  });

  it('trims plans by scope', () => {
    expect(planWorkflowAgents('full', { write_content: false, read_only: false })).toEqual([
      'planner',
      'hook_designer',
    ]);
    expect(planWorkflowAgents('full', { write_content: null, read_only: true })).toEqual([]);
    expect(planWorkflowAgents('standard', { write_content: null, read_only: false })).toEqual([
      'planner',
      'writer',
    ]);
  });
});

const previous = (overrides: Partial<RoutingRecord> = {}): RoutingRecord => ({
  v: 1,
  current_agent: 'planner',
  workflow_plan: 'standard',
  workflow_agents: ['planner', 'writer'],
  write_content: true,
  read_only: false,
  scope: '规划前三章',
  requested_file_types: ['outline'],
  source: 'llm',
  first_message: false,
  clarify_first: false,
  auto_review: false,
  ...overrides,
});

describe('deterministic continuations', () => {
  it('recognises 「继续」 and vague edit requests, not specific ones', () => {
    expect(['继续', '继续吧', '接着写', 'continue', ' 继续。'].map(isContinueOnly)).toEqual([
      true,
      true,
      true,
      true,
      true,
    ]);
    expect(isContinueOnly('继续写第三章，加一场打斗')).toBe(false);
    const vague = ['改一下', '帮我优化一下', '润色一下吧', '写得更好一点', 'improve it', 'make it better'];
    expect(vague.filter((message) => !isVagueEditRequest(message))).toEqual([]);
    const specific = ['把第二章开头改成雨夜', '润色第三段的对话', '优化一下林晚出场那段', '写第一章'];
    expect(specific.filter(isVagueEditRequest)).toEqual([]);
  });

  it('resumes the cut-off agent after exhaustion when the author only says 继续', () => {
    const cut = previous({ outcome: { reason: 'collaboration_cap', last_agent: 'writer' } });
    expect(
      deterministicRoute({ message: '继续', previous: cut, clarificationPending: false, strategy: 'off' }),
    ).toMatchObject({
      source: 'resume',
      decision: { current_agent: 'writer', workflow_agents: ['planner', 'writer'], scope: '规划前三章' },
    });
    const completed = previous({ outcome: { reason: 'completed', last_agent: 'writer' } });
    expect(
      deterministicRoute({
        message: '继续',
        previous: completed,
        clarificationPending: false,
        strategy: 'llm',
      }),
    ).toBeUndefined();
  });

  it('asks first on a vague edit request, but only once', () => {
    expect(
      deterministicRoute({
        message: '改一下',
        previous: previous(),
        clarificationPending: false,
        strategy: 'llm',
      }),
    ).toMatchObject({
      source: 'clarify_first',
      clarifyFirst: true,
      decision: { current_agent: 'writer', workflow_agents: [] },
    });
    const askedOnce = previous({ source: 'clarify_first' });
    expect(
      deterministicRoute({
        message: '改一下',
        previous: askedOnce,
        clarificationPending: false,
        strategy: 'llm',
      }),
    ).toBeUndefined();
  });

  it('inherits every routing field after a clarification, with the agent that asked (llm only)', () => {
    const asked = previous({
      read_only: false,
      outcome: { reason: 'waiting_user', waiting_agent: 'planner', question: '几章？' },
    });
    expect(
      deterministicRoute({ message: '三章', previous: asked, clarificationPending: true, strategy: 'llm' }),
    ).toEqual({
      source: 'inherited',
      clarifyFirst: false,
      decision: {
        current_agent: 'planner',
        workflow_plan: 'standard',
        workflow_agents: ['planner', 'writer'],
        write_content: true,
        read_only: false,
        scope: '规划前三章',
        requested_file_types: ['outline'],
      },
    });
    expect(
      deterministicRoute({ message: '三章', previous: asked, clarificationPending: true, strategy: 'off' }),
    ).toBeUndefined();
    // Pending is the only signal: a previous reply ending in a question mark does not count.
    expect(
      deterministicRoute({ message: '三章', previous: asked, clarificationPending: false, strategy: 'llm' }),
    ).toBeUndefined();
  });
});

describe('router user message', () => {
  it('uses the first-message form for the first message of a work', () => {
    const text = buildRouterUserMessage({ message: '写个开头', firstMessageProjectLabel: 'novel' });
    expect(text).toMatch(/^\[新作品的第一条消息\]\n作品类型：novel\n\n\[用户本轮原话\]\n写个开头/);
  });

  it('carries the previous tail (600 chars), the status card and the previous routing', () => {
    const text = buildRouterUserMessage({
      message: '好',
      previousAssistant: `${'甲'.repeat(700)}结尾`,
      statusCard: '[状态卡] 上一轮结果：completed',
      previousRouting: '{"current_agent":"writer"}',
    });
    const tail = text.split('\n')[1]!;
    expect([...tail]).toHaveLength(600);
    expect(tail.endsWith('结尾')).toBe(true);
    expect(text).toContain(
      '[状态卡] 上一轮结果：completed\n\n[上一轮路由]\n{"current_agent":"writer"}\n\n[用户本轮原话]\n好',
    );
    expect(buildRouterUserMessage({ message: '你好' })).toBe('[用户本轮原话]\n你好');
  });
});
