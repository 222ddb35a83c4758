import type { ChatMessage } from '@quill/contracts';
import { FILE_WRITE_TOOL_NAMES, type ToolResult, toolNamesForRole } from '@quill/tools';
import { describe, expect, it } from 'vitest';
import { createNoProgressGuard } from '../src/no-progress-guard.ts';
import { SOFT_LANDING_TURNS, softLanding } from '../src/run-budget.ts';
import { createToolFailureBreaker } from '../src/tool-failure-breaker.ts';
import { createToolGate } from '../src/tool-gate.ts';

const failed = (errorType: string): ToolResult => ({ status: 'error', error_type: errorType, message: 'no' });
const succeeded: ToolResult = { status: 'ok', summary: 'ok', data: {} };

describe('tool failure circuit breaker', () => {
  it('opens on the third consecutive unavailable call of the same tool', () => {
    const breaker = createToolFailureBreaker();
    expect(breaker.record('summon_muse', failed('tool_not_found'))).toBeUndefined();
    expect(breaker.record('summon_muse', failed('tool_not_found'))).toBeUndefined();
    expect(breaker.record('summon_muse', failed('tool_not_found'))).toBe('repeated_unavailable_tool_call');
    expect(breaker.open).toBe(true);
  });

  it('counts read-only refusals too, and restarts on a success, another tool or an ordinary failure', () => {
    const breaker = createToolFailureBreaker();
    breaker.record('edit_file', failed('read_only_request'));
    breaker.record('edit_file', failed('read_only_request'));
    breaker.record('query_files', succeeded);
    breaker.record('edit_file', failed('read_only_request'));
    breaker.record('create_file', failed('read_only_request'));
    breaker.record('create_file', failed('text_not_found'));
    expect(breaker.record('create_file', failed('read_only_request'))).toBeUndefined();
    expect(breaker.open).toBe(false);
  });
});

describe('request scope gate', () => {
  const writeCall = JSON.stringify({ title: 'x', file_type: 'draft' });

  it('leaves every tool alone on an ordinary request', () => {
    const gate = createToolGate('writer', { readOnly: false, clarifyFirst: false });
    for (const name of toolNamesForRole('writer')) expect(gate.refuse(name, '{}')).toBeUndefined();
    expect(gate.tools.every((tool) => !tool.function.description.startsWith('[Unavailable'))).toBe(true);
  });

  it('offers only the step’s pinned tool set, in its order, leaving out names this build lacks', () => {
    const gate = createToolGate('writer', { readOnly: false, clarifyFirst: false }, [
      'query_files',
      'retired_tool',
      'create_file',
    ]);
    expect(gate.tools.map((tool) => tool.function.name)).toEqual(['query_files', 'create_file']);
  });

  it('on a read-only request refuses every file-writing tool but keeps it listed as unavailable', () => {
    const gate = createToolGate('writer', { readOnly: true, clarifyFirst: false });
    for (const name of FILE_WRITE_TOOL_NAMES) {
      expect(gate.refuse(name, writeCall)).toMatchObject({
        status: 'error',
        error_type: 'read_only_request',
      });
    }
    expect(gate.tools.map((tool) => tool.function.name)).toEqual([...toolNamesForRole('writer')]);
    for (const tool of gate.tools) {
      expect(tool.function.description.startsWith('[Unavailable')).toBe(
        FILE_WRITE_TOOL_NAMES.includes(tool.function.name),
      );
    }
    expect(gate.refuse('update_project', '{}')).toBeUndefined();
    expect(gate.refuse('query_files', '{}')).toBeUndefined();
    expect(gate.refuse('handoff_to_agent', '{}')).toBeUndefined();
    const parallelWrite = JSON.stringify({
      calls: [
        { tool: 'query_files', arguments: {} },
        { tool: 'edit_file', arguments: {} },
      ],
    });
    expect(gate.refuse('parallel_execute', parallelWrite)).toMatchObject({ error_type: 'read_only_request' });
    expect(
      gate.refuse('parallel_execute', JSON.stringify({ calls: [{ tool: 'query_files', arguments: {} }] })),
    ).toBeUndefined();
  });

  it('before a vague request is clarified refuses writes and drops explicit handoffs', () => {
    const gate = createToolGate('writer', { readOnly: false, clarifyFirst: true });
    expect(gate.refuse('edit_file', '{}')).toMatchObject({ error_type: 'clarify_first' });
    expect(gate.refuse('handoff_to_agent', '{}')).toMatchObject({ error_type: 'clarify_first' });
    expect(gate.refuse('request_clarification', '{}')).toBeUndefined();
    expect(gate.refuse('query_files', '{}')).toBeUndefined();
  });
});

describe('repeat-read no-progress guard', () => {
  it('stops after three refused repeat reads since the last successful write', () => {
    const guard = createNoProgressGuard();
    expect(guard.record(failed('repeated_read'), false)).toBe(false);
    expect(guard.record(failed('repeated_read'), false)).toBe(false);
    expect(guard.record(succeeded, true)).toBe(false);
    expect(guard.record(failed('repeated_read'), false)).toBe(false);
    expect(guard.record(succeeded, false)).toBe(false);
    expect(guard.record(failed('repeated_read'), false)).toBe(false);
    expect(guard.record(failed('repeated_read'), false)).toBe(true);
  });
});

describe('soft landing', () => {
  it('adds one wrap-up note when the step enters its last turns', () => {
    const messages: ChatMessage[] = [];
    const max = 10;
    const added = Array.from({ length: max }, (_, turn) => softLanding(turn, max, messages));
    expect(added.filter(Boolean)).toHaveLength(1);
    expect(added.indexOf(true)).toBe(max - SOFT_LANDING_TURNS);
    expect(messages[0]).toMatchObject({ role: 'user' });
    expect(messages[0]!.content).toContain(`只剩 ${SOFT_LANDING_TURNS} 次`);
  });
});
