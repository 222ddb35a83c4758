import { randomUUID } from 'node:crypto';
import { type Bus, connectBus, publishEnvelope, readOrdered, readStored } from '@quill/bus';
import { EventEnvelope, StepRecordEnvelope, TaskEnvelope } from '@quill/contracts';
import { FILE_WRITE_TOOL_NAMES, QUALITY_REVIEWER_TOOL_NAMES } from '@quill/tools';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestRun } from '../support/run-rows.ts';
import { type Stack, startStack } from '../support/stack.ts';
import { testUrls } from '../support/urls.ts';

let stack: Stack;
let bus: Bus;

beforeAll(async () => {
  stack = await startStack();
  bus = await connectBus({ url: testUrls.nats, namespace: stack.namespace, name: 'reviewer-test' });
});

afterAll(async () => {
  await bus?.close();
  await stack?.stop();
});

/**
 * Opens a run and dispatches a quality_reviewer task straight to its queue (the reviewer compiles
 * its own context from the task: dispatch by reference); answers the run and its step result.
 */
async function dispatchReview(title: string, projectId: string) {
  const { sessionId, runId } = await createTestRun(stack.pool, {
    projectId: stack.projectId,
    userId: stack.userId,
    title,
    generationMode: 'quality',
  });
  const steps = await readOrdered(bus, {
    stream: bus.names.streams.events,
    subject: bus.names.steps(runId),
    schema: StepRecordEnvelope,
  });
  await publishEnvelope(bus, bus.names.task('quality_reviewer', runId), TaskEnvelope, {
    v: 1,
    run_id: runId,
    session_id: sessionId,
    project_id: projectId,
    user_id: stack.userId,
    step: 0,
    role: 'quality_reviewer',
    epoch: 0,
    generation_mode: 'quality',
    context: { message: '请审查第一章。', focus_file_id: null, attached_file_ids: [], ui_language: 'zh' },
  });
  let result: StepRecordEnvelope | undefined;
  for await (const item of steps) {
    result = item.envelope;
    if (result?.kind === 'result') break;
  }
  await steps.close();
  if (result?.kind !== 'result') throw new Error('no step result');
  return { runId, result: result.result };
}

describe('reviewer service', () => {
  it('runs a quality_reviewer task dispatched straight to its queue, with a read-only tool set', async () => {
    const { runId, result } = await dispatchReview('review', stack.projectId);
    expect(result).toMatchObject({
      role: 'quality_reviewer',
      outcome: 'completed',
      files_written: [],
    });
    expect(result.worker_instance).toMatch(/^reviewer-/);
    expect(result.final_text).toContain('审查结论');

    const frames = (
      await readStored(bus, {
        stream: bus.names.streams.events,
        subject: bus.names.events(runId),
        schema: EventEnvelope,
      })
    ).map((item) => item.envelope!.frame);
    expect(frames[0]).toMatchObject({ type: 'agent_start', agent: 'quality_reviewer' });
    expect(frames.some((frame) => frame.type === 'text')).toBe(true);
    expect(frames.at(-1)).toMatchObject({ type: 'message_end', agent: 'quality_reviewer' });

    const [request] = stack.fakeLlm.requests({ run_id: runId, role: 'quality_reviewer' });
    const tools = (request!.body as { tools?: Array<{ function: { name: string } }> }).tools ?? [];
    // The reviewer's set (docs/agent-behaviour.md): reads and hands back, never a file-writing tool.
    expect(tools.map((tool) => tool.function.name)).toEqual([...QUALITY_REVIEWER_TOOL_NAMES]);
    expect(tools.some((tool) => FILE_WRITE_TOOL_NAMES.includes(tool.function.name))).toBe(false);
  });

  it('reports a task whose context cannot be compiled as a failed step with the compile’s code, without a model call', async () => {
    // A project that does not exist is the context service's not_found.
    const { runId, result } = await dispatchReview('no context', randomUUID());
    expect(result).toMatchObject({
      role: 'quality_reviewer',
      outcome: 'failed',
      error_code: 'not_found',
      model_calls: 0,
    });
    expect(stack.fakeLlm.requests({ run_id: runId })).toEqual([]);
  });
});
