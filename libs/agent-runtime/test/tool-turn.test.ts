import type { SseFrame, ToolCall } from '@quill/contracts';
import { createToolRunState, type ToolContext } from '@quill/tools';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import type { StepEmitter } from '../src/frame-emitter.ts';
import { createToolExecutor } from '../src/tool-turn.ts';

/** An executor whose calls never reach the database: every call below is refused or needs none. */
function executor(scope = { readOnly: false, clarifyFirst: false }) {
  const frames: SseFrame[] = [];
  const emitter: StepEmitter = {
    text: () => {},
    thinking: () => {},
    fileDelta: () => {},
    emit: (value) => frames.push(value),
    close: async () => {},
    settle: async () => 0,
    framesPublished: 0,
  };
  const context = {
    runId: '00000000-0000-4000-8000-0000000000aa',
    epoch: 0,
    role: 'writer',
    state: createToolRunState(),
  } as unknown as ToolContext;
  const tools = createToolExecutor({
    role: 'writer',
    scope,
    context,
    emitter,
    log: pino({ level: 'silent' }),
  });
  return { tools, frames, context };
}

let counter = 0;
const call = (name: string, args: unknown = {}): ToolCall => ({
  id: `call_${++counter}`,
  type: 'function',
  function: { name, arguments: JSON.stringify(args) },
});

describe('tool executor (the step machine tool port)', () => {
  it('answers an unknown tool with tool_not_found, for the model to correct itself', async () => {
    const { tools } = executor();
    expect(await tools.execute(call('summon_muse'), 0)).toMatchObject({
      status: 'error',
      error_type: 'tool_not_found',
    });
  });

  it('records a handoff request in the run state', async () => {
    const { tools, context } = executor();
    const outcome = await tools.execute(
      call('handoff_to_agent', { to_agent: 'quality_reviewer', reason: '请审稿' }),
      0,
    );
    expect(outcome.status).toBe('ok');
    expect(context.state.handoff).toEqual({ to_agent: 'quality_reviewer', reason: '请审稿' });
  });

  it('refuses write tools on a read-only request with a readable result', async () => {
    const { tools } = executor({ readOnly: true, clarifyFirst: false });
    const outcome = await tools.execute(
      call('edit_file', { id: crypto.randomUUID(), operation: 'append', new_text: 'x' }),
      0,
    );
    expect(outcome).toMatchObject({ status: 'error', error_type: 'read_only_request' });
  });

  it('sends tool_progress frames on the parallel_execute card', async () => {
    const { tools, frames } = executor();
    const parallel = call('parallel_execute', {
      calls: [
        { tool: 'query_files', arguments: { id: 'not-a-uuid' } },
        { tool: 'query_files', arguments: { tail_chars: 3 } },
      ],
    });
    await tools.execute(parallel, 0);
    expect(frames).toMatchObject([
      {
        type: 'tool_progress',
        tool_call_id: parallel.id,
        tool_name: 'parallel_execute',
        completed: 1,
        total: 2,
      },
      {
        type: 'tool_progress',
        tool_call_id: parallel.id,
        tool_name: 'parallel_execute',
        completed: 2,
        total: 2,
      },
    ]);
  });
});
