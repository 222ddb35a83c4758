import type { Bus } from '@quill/bus';
import { listArtifacts, listFiles } from '@quill/db';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { countWords } from '../../services/router/src/workflow/review-evidence.ts';
import { type Stack, startStack } from '../support/stack.ts';
import {
  assistantReply,
  connectTestBus,
  fileReplies,
  giveProjectHistory,
  handoffCall,
  LONG_BODY,
  lastInputOf,
  routing,
  runTurn,
  scriptRouter,
  stepResults,
  textOf,
  userMessageRouting,
} from './workflow-support.ts';

/** Issue 3, quality mode: the auto review gate, the single author summary and the review cap. */
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

describe('auto review gate (quality mode)', () => {
  it('reached: the held summary is discarded, the reviewer gets persisted evidence and the questions', async () => {
    scriptRouter(stack, routing('writer', 'quick'));
    stack.fakeLlm.addScript({
      match: { role: 'writer' },
      // The question goes on as data (note_question_for_author); a question mark in prose does not.
      responses: [
        ...fileReplies(LONG_BODY, {
          before: '我先建草稿。',
          after: '\n写好了第一章。你觉得节奏如何？',
          afterTools: [{ name: 'note_question_for_author', arguments: { question: '主角要不要改名？' } }],
        }),
        { text: '' },
      ],
    });
    const turn = await runTurn(stack, { message: '写第一章，800字左右', generation_mode: 'quality' });
    expect(turn.outline).toEqual([
      'run_started',
      'routing_decided:writer/quick/llm',
      'agent_start:writer',
      'message_end:writer',
      'handoff:writer>quality_reviewer',
      'agent_start:quality_reviewer',
      'message_end:quality_reviewer',
      'workflow_complete',
      'done',
    ]);
    // The writer's words before the body streamed; its summary after the body never did.
    const shown = textOf(turn.frames);
    expect(shown).toContain('我先建草稿。');
    expect(shown).not.toContain('写好了第一章');
    expect(shown).toContain('审查结论');

    const steps = await stepResults(bus, turn.runId);
    expect(steps.map((step) => [step.role, step.worker_instance.replace(/-\d+$/, '')])).toEqual([
      ['writer', 'writer'],
      ['quality_reviewer', 'reviewer'],
    ]);
    // The line break right after `</file>` is not chat text (docs/agent-behaviour.md).
    expect(steps[0]!.held_text).toBe('写好了第一章。你觉得节奏如何？');
    expect(steps[0]!.author_questions).toEqual(['主角要不要改名？']);

    const chapter = (await listFiles(stack.pool, stack.projectId)).find(
      (file) => file.id === steps[0]!.files_written[0]!.file_id,
    )!;
    const review = lastInputOf(stack, turn.runId, 'quality_reviewer', 0);
    expect(review).toContain(
      `[本轮正文字数]\n- 《第一章 雨夜》(id=${chapter.id})：${countWords(chapter.content)} 字`,
    );
    expect(review).toContain('[作者的篇幅要求]\n作者原话：「800字」；达标区间 680–920 字');
    expect(review).toContain(`(id=${chapter.id}, updated_at=${chapter.updatedAt}) 以下是全文，不用再读取。`);
    expect(review).toContain('[内容创作者要问作者的问题]\n- 主角要不要改名？\n\n作者只会读到你这一份总结');

    // The reviewer's worker attached its findings to the artifact it judged, in its own step.
    const artifacts = await listArtifacts(stack.pool, { runId: turn.runId });
    expect(artifacts.map((artifact) => artifact.textFileId)).toEqual([chapter.id]);
    expect(artifacts[0]!.findings).toEqual([
      expect.objectContaining({ run_id: turn.runId, step: steps[1]!.step, role: 'quality_reviewer' }),
    ]);
    expect(artifacts[0]!.findings[0]!.text).toBe(steps[1]!.final_text);

    const reply = await assistantReply(stack, turn.runId);
    expect(reply).toContain('我先建草稿。');
    expect(reply).toContain('审查结论');
    expect(reply).not.toContain('写好了第一章');
    expect(await userMessageRouting(stack, turn.runId)).toMatchObject({
      auto_review: true,
      first_message: false,
    });
  });

  it('not reached: the held summary is released unchanged before the terminal frame', async () => {
    scriptRouter(stack, routing('writer', 'quick'));
    stack.fakeLlm.addScript({
      match: { role: 'writer' },
      responses: fileReplies('一段很短的正文。', { after: '\n短篇写好了。' }),
    });
    const turn = await runTurn(stack, { message: '写一段短的', generation_mode: 'quality' });
    expect(turn.outline).toEqual([
      'run_started',
      'routing_decided:writer/quick/llm',
      'agent_start:writer',
      'message_end:writer',
      'workflow_complete',
      'done',
    ]);
    // Released by the router right after the writer's step, before the terminal frame.
    const released = turn.frames.findIndex(
      (value) => value.type === 'text' && value.content === '短篇写好了。',
    );
    const ended = turn.frames.findIndex((value) => value.type === 'message_end');
    const complete = turn.frames.findIndex((value) => value.type === 'workflow_complete');
    expect(released).toBeGreaterThan(ended);
    expect(released).toBeLessThan(complete);
    expect(turn.frames.some((value) => value.type === 'text' && value.content.includes('CHAT_HOLD'))).toBe(
      false,
    );
    expect(await assistantReply(stack, turn.runId)).toBe('短篇写好了。');
  });

  it('fast mode never reviews automatically, however long the draft', async () => {
    scriptRouter(stack, routing('writer', 'quick'));
    const turn = await runTurn(stack, { message: '写第一章' });
    expect(turn.outline).not.toContain('agent_start:quality_reviewer');
    expect(textOf(turn.frames)).toContain('第一章初稿已完成');
  });

  it('caps review rounds: a revision is not re-reviewed automatically and the third review is dropped', async () => {
    scriptRouter(stack, routing('writer', 'quick'));
    stack.fakeLlm.addScript({
      match: { role: 'writer' },
      responses: [
        ...fileReplies(LONG_BODY, { after: '\n初稿写好了。' }),
        { text: '按意见改好了。', tool_calls: [handoffCall('quality_reviewer', '请再审一次')] },
        { text: '又改了一遍。', tool_calls: [handoffCall('quality_reviewer', '请第三次审')] },
      ],
    });
    stack.fakeLlm.addScript({
      match: { role: 'quality_reviewer' },
      responses: [
        { text: '节奏偏慢。', tool_calls: [handoffCall('writer', '收紧第二段')] },
        { text: '还差一点。', tool_calls: [handoffCall('writer', '改结尾')] },
      ],
    });
    const turn = await runTurn(stack, { message: '写第一章', generation_mode: 'quality' });
    expect(turn.outline.filter((entry) => /^(agent_start|handoff)/.test(entry))).toEqual([
      'agent_start:writer',
      'handoff:writer>quality_reviewer',
      'agent_start:quality_reviewer',
      'handoff:quality_reviewer>writer',
      'agent_start:writer',
      'handoff:writer>quality_reviewer',
      'agent_start:quality_reviewer',
      'handoff:quality_reviewer>writer',
      'agent_start:writer',
    ]);
    expect(turn.outline.slice(-2)).toEqual(['workflow_complete', 'done']);
    const handoff = turn.frames.find(
      (value) => value.type === 'handoff' && value.from_agent === 'quality_reviewer',
    );
    expect(handoff).toMatchObject({ reason: '收紧第二段' });
    // The revising writer gets the review it answers.
    expect(lastInputOf(stack, turn.runId, 'writer', 2)).toContain('[审稿意见]\n节奏偏慢。');
  });
});

describe('one turn context per run', () => {
  type Body = { messages: Array<{ role: string; content: string | null }> };
  /** Every message before the compiled user message, and that message up to `</turn_context>`. */
  const turnPrefix = (body: unknown) => {
    const { messages } = body as Body;
    const at = messages.findIndex((message) => message.content?.startsWith('<turn_context>'));
    expect(at).toBeGreaterThan(0);
    const user = messages[at]!.content!;
    return JSON.stringify([...messages.slice(0, at), user.slice(0, user.indexOf('</turn_context>') + 15)]);
  };

  it('planner, writer and reviewer prompts of one run share the prefix up to and including </turn_context>', async () => {
    scriptRouter(stack, routing('planner', 'standard'));
    stack.fakeLlm.addScript({
      match: { role: 'writer' },
      responses: fileReplies(LONG_BODY, { after: '\n第一章写好了。' }),
    });
    const turn = await runTurn(stack, { message: '先规划，再写第一章', generation_mode: 'quality' });
    expect(turn.outline).toEqual(
      expect.arrayContaining(['agent_start:planner', 'agent_start:writer', 'agent_start:quality_reviewer']),
    );
    const [planner, writer, reviewer] = (['planner', 'writer', 'quality_reviewer'] as const).map((role) => {
      const call = stack.fakeLlm.requests({ run_id: turn.runId, role })[0];
      if (!call) throw new Error(`no ${role} call`);
      return turnPrefix(call.body);
    });
    expect(writer).toBe(planner);
    expect(reviewer).toBe(planner);
    // Built when the run started: the chapter the writer then wrote is not in it.
    expect(planner).not.toContain(LONG_BODY.slice(0, 200));
  });
});
