import { createParser } from 'eventsource-parser';
import { describe, expect, it } from 'vitest';
import { type FrameType, NON_TERMINAL_WORKFLOW_STOPPED_REASONS } from '../src/frames.ts';
import {
  ERROR_CATALOG,
  ERROR_CODES,
  encodeSseRetry,
  errorFrame,
  FRAME_TYPES,
  frame,
  isTerminalFrame,
  SseFrame,
  WORKFLOW_STOPPED_REASONS,
} from '../src/index.ts';
import { encodeSseFrame, parseSseText } from '../src/testing.ts';

const runId = 'run-0001';
const ts = '2025-01-02T03:04:05.123456Z';

/** One valid frame per type; the Record type makes a new frame type without an example a type error. */
const EXAMPLES: { [T in FrameType]: Extract<SseFrame, { type: T }> } = {
  run_started: {
    type: 'run_started',
    run_id: runId,
    ts,
    session_id: 'session-1',
    project_id: 'project-1',
    generation_mode: 'fast',
  },
  routing_decided: {
    type: 'routing_decided',
    run_id: runId,
    ts,
    agent: 'planner',
    workflow_plan: 'standard',
    workflow_agents: ['planner', 'writer'],
    read_only: false,
    write_content: null,
    scope: '写第一章',
    source: 'llm',
  },
  agent_start: { type: 'agent_start', run_id: runId, ts, agent: 'planner', step: 0 },
  text: { type: 'text', run_id: runId, ts, agent: 'writer', content: '第一章\n\n雨夜，"她"说：<b>不</b>' },
  thinking: { type: 'thinking', run_id: runId, ts, agent: 'planner', content: 'outline first' },
  tool_call: {
    type: 'tool_call',
    run_id: runId,
    ts,
    agent: 'writer',
    tool_call_id: 'call_1',
    tool_name: 'create_file',
    arguments: { title: '第一章', file_type: 'chapter', nested: { list: [1, 'two', null] } },
  },
  tool_result: {
    type: 'tool_result',
    run_id: runId,
    ts,
    agent: 'writer',
    tool_call_id: 'call_1',
    tool_name: 'create_file',
    status: 'error',
    error_type: 'file_not_found',
    summary: 'no such file',
  },
  tool_progress: {
    type: 'tool_progress',
    run_id: runId,
    ts,
    agent: 'writer',
    tool_call_id: 'call_2',
    tool_name: 'parallel_execute',
    completed: 2,
    total: 3,
    message: 'query_files finished',
  },
  file_start: {
    type: 'file_start',
    run_id: runId,
    ts,
    agent: 'writer',
    file_id: 'file-1',
    title: '第一章',
    file_type: 'chapter',
  },
  file_delta: { type: 'file_delta', run_id: runId, ts, file_id: 'file-1', content: 'line one\nline two' },
  file_saved: {
    type: 'file_saved',
    run_id: runId,
    ts,
    file_id: 'file-1',
    title: '第一章',
    version: 2,
    chars: 17,
  },
  file_removed: {
    type: 'file_removed',
    run_id: runId,
    ts,
    agent: 'writer',
    file_id: 'file-2',
    title: '第二章',
    reason: 'empty_file_unwritten',
  },
  step_resumed: {
    type: 'step_resumed',
    run_id: runId,
    ts,
    agent: 'writer',
    step: 1,
    resumed_turn: 2,
    valid_through_id: 41,
  },
  handoff: {
    type: 'handoff',
    run_id: runId,
    ts,
    from_agent: 'planner',
    to_agent: 'writer',
    reason: 'outline ready',
  },
  steering_received: { type: 'steering_received', run_id: runId, ts, content: '改成第一人称' },
  clarification_requested: {
    type: 'clarification_requested',
    run_id: runId,
    ts,
    agent: 'planner',
    question: 'Which point of view?',
  },
  workflow_stopped: { type: 'workflow_stopped', run_id: runId, ts, reason: 'user_stopped' },
  workflow_complete: { type: 'workflow_complete', run_id: runId, ts },
  message_end: { type: 'message_end', run_id: runId, ts, agent: 'writer', stop_reason: 'end_turn' },
  error: {
    type: 'error',
    run_id: runId,
    ts,
    code: 'model_error',
    message: ERROR_CATALOG.model_error.message,
    retryable: true,
    refundable: true,
  },
  quota_refunded: { type: 'quota_refunded', run_id: runId, ts, credits: 1 },
  done: { type: 'done', run_id: runId, ts },
};

describe('frame examples', () => {
  it('cover exactly FRAME_TYPES', () => {
    expect(Object.keys(EXAMPLES).sort()).toEqual([...FRAME_TYPES].sort());
  });

  it.each(FRAME_TYPES)('%s round-trips through JSON and SseFrame', (type) => {
    const example = EXAMPLES[type];
    const parsed = SseFrame.parse(JSON.parse(JSON.stringify(example)));
    expect(parsed).toEqual(example);
    expect(parsed.type).toBe(type);
  });

  it.each(FRAME_TYPES)('%s round-trips through the SSE wire format with its id', (type) => {
    const example = EXAMPLES[type];
    const wire = encodeSseFrame(example, 42);
    expect(wire.endsWith('\n\n')).toBe(true);
    // One event: the payload never leaks a raw newline that would split it.
    expect(wire.slice(0, -2)).not.toContain('\n\n');
    expect(parseSseText(wire)).toEqual([{ id: '42', frame: example }]);
    expect(SseFrame.parse(parseSseText(wire)[0]?.frame)).toEqual(example);
  });

  it.each(FRAME_TYPES)('%s is named in `event:` for a spec-following parser, next to its JSON', (type) => {
    const events: Array<{ event?: string | undefined; id?: string | undefined; data: string }> = [];
    let retry: number | undefined;
    const parser = createParser({ onEvent: (event) => events.push(event), onRetry: (ms) => (retry = ms) });
    parser.feed(encodeSseRetry(2000) + encodeSseFrame(EXAMPLES[type], 7));
    expect(retry).toBe(2000);
    expect(events).toEqual([{ event: type, id: '7', data: JSON.stringify(EXAMPLES[type]) }]);
  });

  it('keeps several encoded frames apart and in order, with and without ids', () => {
    const body =
      encodeSseFrame(EXAMPLES.text, 1) +
      encodeSseFrame(EXAMPLES.file_delta) +
      encodeSseFrame(EXAMPLES.done, 3);
    expect(parseSseText(body)).toEqual([
      { id: '1', frame: EXAMPLES.text },
      { id: undefined, frame: EXAMPLES.file_delta },
      { id: '3', frame: EXAMPLES.done },
    ]);
  });

  it('frame() builds a valid frame with the run id and a timestamp', () => {
    const built = frame('text', runId, { agent: 'writer', content: 'hi' });
    expect(SseFrame.parse(built)).toEqual(built);
    expect(built.run_id).toBe(runId);
    expect(built.ts).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
  });
});

describe('SseFrame validation', () => {
  it('rejects an unknown type', () => {
    expect(SseFrame.safeParse({ type: 'mystery', run_id: runId, ts }).success).toBe(false);
    expect(SseFrame.safeParse({ ...EXAMPLES.done, type: 'Done' }).success).toBe(false);
  });

  it('rejects a known type with a missing or wrong field', () => {
    const { content: _content, ...withoutContent } = EXAMPLES.text;
    expect(SseFrame.safeParse(withoutContent).success).toBe(false);
    expect(SseFrame.safeParse({ ...EXAMPLES.text, run_id: '' }).success).toBe(false);
    expect(SseFrame.safeParse({ ...EXAMPLES.text, agent: 'editor' }).success).toBe(false);
    expect(SseFrame.safeParse({ ...EXAMPLES.error, code: 'not_a_code' }).success).toBe(false);
    expect(SseFrame.safeParse({ ...EXAMPLES.workflow_stopped, reason: 'bored' }).success).toBe(false);
  });
});

describe('isTerminalFrame', () => {
  const TERMINAL_TYPES: FrameType[] = ['workflow_complete', 'error'];

  it.each(FRAME_TYPES.filter((type) => type !== 'workflow_stopped'))('%s', (type) => {
    expect(isTerminalFrame(EXAMPLES[type])).toBe(TERMINAL_TYPES.includes(type));
  });

  it.each(WORKFLOW_STOPPED_REASONS)('workflow_stopped with reason %s', (reason) => {
    const stopped = { ...EXAMPLES.workflow_stopped, reason };
    const nonTerminal = (NON_TERMINAL_WORKFLOW_STOPPED_REASONS as readonly string[]).includes(reason);
    expect(isTerminalFrame(stopped)).toBe(!nonTerminal);
  });

  it('read_only_handoff_blocked is the non-terminal stop', () => {
    expect(isTerminalFrame({ ...EXAMPLES.workflow_stopped, reason: 'read_only_handoff_blocked' })).toBe(
      false,
    );
    expect(isTerminalFrame({ ...EXAMPLES.workflow_stopped, reason: 'user_stopped' })).toBe(true);
  });
});

describe('errorFrame', () => {
  it.each(ERROR_CODES)('%s carries the catalog message and flags', (code) => {
    const built = errorFrame(runId, code);
    const { message, retryable, refundable } = ERROR_CATALOG[code];
    expect(built).toMatchObject({ type: 'error', run_id: runId, code, message, retryable, refundable });
    expect(SseFrame.parse(built)).toEqual(built);
    expect(isTerminalFrame(built)).toBe(true);
  });
});
