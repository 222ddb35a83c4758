import { AGENT_ROLES } from '@quill/contracts';
import { describe, expect, it } from 'vitest';
import {
  createToolRunState,
  executeTool,
  FILE_WRITE_TOOL_NAMES,
  QUALITY_REVIEWER_TOOL_NAMES,
  TOOL_SPECS,
  type ToolContext,
  toolNamesForRole,
} from '../src/index.ts';
import { DEFAULT_TOOL_NAMES, SKILL_TOOL_NAMES, toolDefinitionsForRole } from '../src/registry.ts';

/** Seed 000 「工具」: the tools every write-capable role gets (skills tools join when registered). */
const SEED_TOOLS = [
  'create_file',
  'edit_file',
  'delete_file',
  'rename_file',
  'query_files',
  'update_project',
  'handoff_to_agent',
  'request_clarification',
  'parallel_execute',
];

describe('tool registry alignment', () => {
  it('registers each spec under its own name, with a description and an object schema', () => {
    for (const [name, spec] of Object.entries(TOOL_SPECS)) {
      expect(spec.name).toBe(name);
      expect(spec.description.length).toBeGreaterThan(20);
      expect(typeof spec.handle).toBe('function');
    }
  });

  it('has a handler for every tool in every role set, and every handler is in some set', () => {
    const inSets = new Set([...DEFAULT_TOOL_NAMES, ...QUALITY_REVIEWER_TOOL_NAMES]);
    for (const name of inSets) expect(TOOL_SPECS[name], name).toBeDefined();
    for (const name of Object.keys(TOOL_SPECS)) expect(inSets.has(name), `${name} in no role set`).toBe(true);
    expect(new Set(DEFAULT_TOOL_NAMES).size).toBe(DEFAULT_TOOL_NAMES.length);
  });

  it('gives planner / hook_designer / writer the seed tool set and skills slots only when registered', () => {
    for (const name of SEED_TOOLS) expect(DEFAULT_TOOL_NAMES).toContain(name);
    for (const name of SKILL_TOOL_NAMES) {
      expect(DEFAULT_TOOL_NAMES.includes(name)).toBe(name in TOOL_SPECS);
      expect(QUALITY_REVIEWER_TOOL_NAMES.includes(name)).toBe(name in TOOL_SPECS);
    }
    for (const role of AGENT_ROLES.filter((role) => role !== 'quality_reviewer')) {
      expect(toolNamesForRole(role)).toBe(DEFAULT_TOOL_NAMES);
    }
  });

  it('keeps the reviewer read-only and derives FILE_WRITE_TOOL_NAMES from writesFiles', () => {
    expect(toolNamesForRole('quality_reviewer')).toBe(QUALITY_REVIEWER_TOOL_NAMES);
    expect(QUALITY_REVIEWER_TOOL_NAMES.filter((name) => FILE_WRITE_TOOL_NAMES.includes(name))).toEqual([]);
    expect([...FILE_WRITE_TOOL_NAMES].sort()).toEqual([
      'create_file',
      'delete_file',
      'edit_file',
      'rename_file',
    ]);
    for (const spec of Object.values(TOOL_SPECS)) {
      expect(FILE_WRITE_TOOL_NAMES.includes(spec.name)).toBe(spec.writesFiles);
      // Only read-only tools may run inside parallel_execute.
      if (spec.parallelSafe) expect(spec.writesFiles).toBe(false);
    }
  });

  it('sends each role provider-neutral function definitions matching its set', () => {
    for (const role of AGENT_ROLES) {
      const definitions = toolDefinitionsForRole(role);
      expect(definitions.map((definition) => definition.function.name)).toEqual([...toolNamesForRole(role)]);
      for (const definition of definitions) {
        expect(definition.type).toBe('function');
        expect(definition.function.parameters).toMatchObject({ type: 'object' });
        expect(definition.function.parameters).not.toHaveProperty('$schema');
      }
    }
  });
});

describe('executeTool never throws', () => {
  // No database is touched: every call below is refused before a handler runs.
  const context = { role: 'writer', state: createToolRunState() } as unknown as ToolContext;

  it.each([
    ['no_such_tool', '{}', 'tool_not_found'],
    ['edit_file', '{not json', 'invalid_arguments'],
    ['edit_file', '[1,2]', 'invalid_arguments'],
    ['edit_file', JSON.stringify({ id: 'x', operation: 'replace' }), 'invalid_arguments'],
    [
      'edit_file',
      JSON.stringify({ id: crypto.randomUUID(), operation: 'insert', new_text: 'a' }),
      'invalid_arguments',
    ],
    ['query_files', JSON.stringify({ tail_chars: 10 }), 'invalid_arguments'],
    [
      'query_files',
      JSON.stringify({ id: crypto.randomUUID(), tail_chars: 5, section: 'a' }),
      'invalid_arguments',
    ],
    ['delete_file', JSON.stringify({ folder: '草稿' }), 'invalid_arguments'],
    ['create_file', JSON.stringify({ title: '', file_type: 'draft' }), 'invalid_arguments'],
    ['create_file', JSON.stringify({ title: 'x', file_type: 'draft', extra: 1 }), 'invalid_arguments'],
    ['handoff_to_agent', JSON.stringify({ to_agent: 'boss', reason: 'x' }), 'invalid_arguments'],
    ['update_project', '{}', 'invalid_arguments'],
  ])('%s(%s) → %s', async (name, rawArguments, expected) => {
    const result = await executeTool(name, rawArguments, context);
    expect(result).toMatchObject({ status: 'error', error_type: expected });
    if (result.status === 'error') expect(result.message.length).toBeGreaterThan(5);
  });

  it('names the offending field in invalid_arguments', async () => {
    const result = await executeTool('rename_file', JSON.stringify({ id: crypto.randomUUID() }), context);
    expect(result).toMatchObject({ status: 'error', error_type: 'invalid_arguments' });
    expect(result.status === 'error' && result.message).toContain('new_title');
  });

  it('refuses a write tool to the reviewer as tool_not_found', async () => {
    const reviewer = { ...context, role: 'quality_reviewer' } as ToolContext;
    const result = await executeTool(
      'create_file',
      JSON.stringify({ title: 'x', file_type: 'draft' }),
      reviewer,
    );
    expect(result).toMatchObject({ status: 'error', error_type: 'tool_not_found' });
  });

  it('refuses a tool outside the step’s pinned tool set, even one the role has (docs/kernel.md)', async () => {
    const pinned = { ...context, toolNames: ['query_files'] } as ToolContext;
    const result = await executeTool(
      'create_file',
      JSON.stringify({ title: 'x', file_type: 'draft' }),
      pinned,
    );
    expect(result).toMatchObject({ status: 'error', error_type: 'tool_not_found' });
  });
});
