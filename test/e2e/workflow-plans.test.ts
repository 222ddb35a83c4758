import type { Bus } from '@quill/bus';
import { isTerminalFrame } from '@quill/contracts';
import { listFiles } from '@quill/db';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type Stack, startStack } from '../support/stack.ts';
import {
  assistantReply,
  connectTestBus,
  giveProjectHistory,
  lastInputOf,
  routing,
  runTurn,
  scriptRouter,
  stepResults,
  userMessageRouting,
} from './workflow-support.ts';

/**
 * Issue 3: the router service routes with the model and runs each plan across the role services
 * (planner / hook_designer / writer in the writer service, quality_reviewer in the reviewer service).
 */
let stack: Stack;
let bus: Bus;

beforeAll(async () => {
  stack = await startStack();
  bus = await connectTestBus(stack);
  await giveProjectHistory(stack);
});
afterAll(async () => {
  await bus?.close();
  await stack?.stop();
});
beforeEach(() => stack.fakeLlm.clearScripts());

const serviceOf = (instance: string) => instance.replace(/-\d+$/, '');

describe('workflow plans', () => {
  it('quick: the writer alone; routing stored on the message, scope sent but never stored', async () => {
    scriptRouter(stack, routing('writer', 'quick', { scope: '写第一章：雨夜书店' }));
    const turn = await runTurn(stack, { message: '写第一章：雨夜里的旧书店' });
    expect(turn.outline).toEqual([
      'run_started',
      'routing_decided:writer/quick/llm',
      'agent_start:writer',
      'message_end:writer',
      'workflow_complete',
      'done',
    ]);
    expect(turn.frames.filter(isTerminalFrame)).toHaveLength(1);
    expect(await userMessageRouting(stack, turn.runId)).toMatchObject({
      current_agent: 'writer',
      workflow_plan: 'quick',
      workflow_agents: ['writer'],
      scope: '写第一章：雨夜书店',
      source: 'llm',
      first_message: false,
      auto_review: false,
      outcome: { reason: 'completed', last_agent: 'writer' },
    });
    // A new session has no previous reply: the router model sees just the author's words.
    const [routerCall] = stack.fakeLlm.requests({ run_id: turn.runId, role: 'router' });
    const routerInput = (routerCall!.body as { messages: Array<{ content: string }> }).messages[1]!.content;
    expect(routerInput).toBe('[用户本轮原话]\n写第一章：雨夜里的旧书店');
    // The scope directive is the writer's last input message, never part of stored history.
    const directive = lastInputOf(stack, turn.runId, 'writer', 0);
    expect(directive.startsWith('[本次运行的系统指令]')).toBe(true);
    expect(directive).toContain('## 本轮用户范围约束 [最高优先级]\n- 作者本轮要的范围：写第一章：雨夜书店');
    const stored = await stack.pool.query<{ content: string }>('SELECT content FROM messages');
    expect(stored.rows.some((row) => row.content.includes('本轮用户范围约束'))).toBe(false);
  });

  it('standard: planner → writer, in the writer service, with the planned-handoff note', async () => {
    scriptRouter(stack, routing('planner', 'standard'));
    const turn = await runTurn(stack, { message: '先规划，再写第一章' });
    expect(turn.outline).toEqual([
      'run_started',
      'routing_decided:planner/standard/llm',
      'agent_start:planner',
      'message_end:planner',
      'handoff:planner>writer',
      'agent_start:writer',
      'message_end:writer',
      'workflow_complete',
      'done',
    ]);
    const writerDirective = lastInputOf(stack, turn.runId, 'writer', 0);
    expect(writerDirective).toContain('计划交接不扩大交付');
    expect(writerDirective).toContain('[本轮已完成的工作]\n- planner；写入 《全书大纲 雨夜旧书店》');
    expect(lastInputOf(stack, turn.runId, 'planner', 0)).toContain('规划完成后本轮会直接交给 writer');
    const steps = await stepResults(bus, turn.runId);
    expect(steps.map((step) => [step.role, serviceOf(step.worker_instance)])).toEqual([
      ['planner', 'writer'],
      ['writer', 'writer'],
    ]);
    const files = await listFiles(stack.pool, stack.projectId);
    const written = steps.flatMap((step) => step.files_written.map((write) => write.file_id));
    expect(
      files
        .filter((file) => written.includes(file.id))
        .map((file) => file.fileType)
        .sort(),
    ).toEqual(['draft', 'outline']);
  });

  it('full: planner → hook_designer → writer', async () => {
    scriptRouter(stack, routing('planner', 'full'));
    const turn = await runTurn(stack, { message: '从零开始：规划、设计开篇钩子、写第一章' });
    expect(turn.outline.filter((entry) => /^(agent_start|handoff)/.test(entry))).toEqual([
      'agent_start:planner',
      'handoff:planner>hook_designer',
      'agent_start:hook_designer',
      'handoff:hook_designer>writer',
      'agent_start:writer',
    ]);
    expect(turn.outline.slice(-2)).toEqual(['workflow_complete', 'done']);
    expect((await userMessageRouting(stack, turn.runId)).workflow_agents).toEqual([
      'planner',
      'hook_designer',
      'writer',
    ]);
  });

  it('hook_focus: hook_designer → writer', async () => {
    scriptRouter(stack, routing('hook_designer', 'hook_focus'));
    const turn = await runTurn(stack, { message: '给第一章设计一个抓人的开头，然后写出来' });
    expect(turn.outline.filter((entry) => /^(agent_start|handoff)/.test(entry))).toEqual([
      'agent_start:hook_designer',
      'handoff:hook_designer>writer',
      'agent_start:writer',
    ]);
  });

  it('review_only: quality_reviewer alone, in the reviewer service', async () => {
    scriptRouter(
      stack,
      routing('quality_reviewer', 'review_only', {
        write_content: false,
        read_only: true,
        scope: '审第一章',
      }),
    );
    const turn = await runTurn(stack, { message: '帮我审一下第一章' });
    expect(turn.outline).toEqual([
      'run_started',
      'routing_decided:quality_reviewer/review_only/llm',
      'agent_start:quality_reviewer',
      'message_end:quality_reviewer',
      'workflow_complete',
      'done',
    ]);
    const [step] = await stepResults(bus, turn.runId);
    expect(serviceOf(step!.worker_instance)).toBe('reviewer');
    expect(stack.services.map((service) => service.instanceId)).toContain(step!.worker_instance);
    expect(await assistantReply(stack, turn.runId)).toContain('审查结论');
  });

  it.each([
    ['prose instead of JSON', 'I think the writer should handle this.'],
    ['an unknown agent', '{"current_agent":"editor","workflow_plan":"quick"}'],
    ['truncated JSON', '{"current_agent": "planner", "workflow_'],
  ])(
    'a malformed router answer (%s) falls back to the writer, logged, never crashing the run',
    async (_label, answer) => {
      scriptRouter(stack, answer);
      const turn = await runTurn(stack, { message: '写第二章' });
      expect(turn.outline).toEqual([
        'run_started',
        'routing_decided:writer/quick/fallback',
        'agent_start:writer',
        'message_end:writer',
        'workflow_complete',
        'done',
      ]);
      expect(await userMessageRouting(stack, turn.runId)).toMatchObject({
        source: 'fallback',
        current_agent: 'writer',
      });
      const router = stack.services.find((service) => service.name === 'router')!;
      expect(router.output()).toContain('router answer unusable; writer fallback');
    },
  );
});
