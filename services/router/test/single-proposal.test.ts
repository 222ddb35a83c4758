import { describe, expect, it } from 'vitest';
import { deterministicRoute } from '../src/routing/continuations.ts';
import type { RoutingRecord } from '../src/routing/routing-record.ts';
import { proposedChangeCount, proposedSingleChange } from '../src/routing/single-proposal.ts';

const previous: RoutingRecord = {
  v: 1,
  current_agent: 'writer',
  workflow_plan: 'quick',
  workflow_agents: ['writer'],
  write_content: true,
  read_only: false,
  scope: '写第三章',
  requested_file_types: ['draft'],
  source: 'llm',
  first_message: false,
  clarify_first: false,
  auto_review: false,
};

const ONE = '第三章写好了，共三千字。\n\n我建议把结尾林晚的独白压缩一半，节奏会更紧。需要的话告诉我。';
const ONE_EN = 'Chapter three is saved.\n\nShall I tighten the ending monologue?';
const SEVERAL =
  '第三章写好了。可以再打磨的地方：\n1. 开头的雨景偏长\n2. 林晚的独白可以压缩\n3. 结尾的悬念不够';
const NONE = '第三章写好了，共三千字，已保存。';
const SEVERAL_SENTENCES = '我建议把开头改短。另外也可以把结尾改成开放式。';

describe('the previous reply proposed a single change', () => {
  it.each<[string, string, number]>([
    ['one proposing sentence', ONE, 1],
    ['one proposing sentence in English', ONE_EN, 1],
    ['a numbered list of three', SEVERAL, 3],
    ['no proposal', NONE, 0],
    ['two proposing sentences', SEVERAL_SENTENCES, 2],
    ['a single list item', '还可以改的一处：\n- 结尾的独白偏长', 1],
  ])('%s', (_name, reply, count) => {
    expect(proposedChangeCount(reply)).toBe(count);
    expect(proposedSingleChange(reply)).toBe(count === 1);
  });

  it('only reads the closing part of the reply, which is what the author answers to', () => {
    const early = `我建议把开头改短。${'正文'.repeat(400)}第三章写好了。`;
    expect(proposedChangeCount(early)).toBe(0);
  });

  it('skips the clarification for a vague request after a single proposal, asks otherwise', () => {
    const route = (previousAssistant: string | undefined) =>
      deterministicRoute({
        message: '改一下吧',
        previous,
        clarificationPending: false,
        strategy: 'llm',
        previousAssistant,
      });
    expect(route(ONE)).toBeUndefined();
    expect(route(ONE_EN)).toBeUndefined();
    for (const reply of [SEVERAL, NONE, SEVERAL_SENTENCES, undefined]) {
      expect(route(reply), String(reply)).toMatchObject({ source: 'clarify_first', clarifyFirst: true });
    }
  });
});
