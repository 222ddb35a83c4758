import { randomUUID } from 'node:crypto';
import { skillReadUsage } from '@quill/db';
import { createProject, createUser, saveSkillPackage, setSkillEnabled } from '@quill/db/gateway';
import { createTestDatabase, type TestDatabase } from '@quill/db/testing';
import { estimateTextTokens } from '@quill/llm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createToolRunState, executeTool, type ToolResult, toolNamesForRole } from '../src/index.ts';

let database: TestDatabase;
let userId: string;
let projectId: string;

const BODY = '先列出本章的三个悬念，再决定哪一个留到章末。'.repeat(20);
const REFERENCE = `${'悬念类型：身份、动机、时间。'.repeat(200)}结尾`;

beforeAll(async () => {
  database = await createTestDatabase();
  userId = (await createUser(database.pool, { email: `${randomUUID()}@quill.test`, displayName: 'a' })).id;
  projectId = (await createProject(database.pool, { ownerId: userId, title: '钟楼' })).id;
  for (const name of ['hooks', 'pacing', 'dialogue', 'worldbuilding']) {
    await saveSkillPackage(database.pool, userId, {
      name,
      description: `${name} 技能`,
      content: BODY,
      metadata: { name, description: `${name} 技能` },
      resources: [
        { path: 'reference/types.md', content: REFERENCE },
        { path: 'scripts/count.py', content: 'print("never executed")' },
      ],
    });
  }
  await saveSkillPackage(database.pool, userId, {
    name: 'retired',
    description: '已停用',
    content: '停用的技能',
    metadata: {},
    resources: [],
  });
  await setSkillEnabled(database.pool, userId, 'retired', false);
});

afterAll(async () => {
  await database?.drop();
});

function runTools(options: { runId?: string; skillTokenBudget?: number } = {}) {
  const runId = options.runId ?? randomUUID();
  return {
    runId,
    call: (name: string, args: Record<string, unknown>): Promise<ToolResult> =>
      executeTool(name, JSON.stringify(args), {
        pool: database.pool,
        runId,
        epoch: 0,
        projectId,
        userId,
        role: 'writer',
        state: createToolRunState(),
        ...(options.skillTokenBudget ? { skillTokenBudget: options.skillTokenBudget } : {}),
      }),
  };
}

const data = (result: ToolResult) => {
  if (result.status !== 'ok') throw new Error(`${result.error_type}: ${result.message}`);
  return result.data;
};

describe('skill tools', () => {
  it('are offered to every role', () => {
    expect(toolNamesForRole('writer')).toEqual(expect.arrayContaining(['load_skill', 'read_skill_resource']));
    expect(toolNamesForRole('quality_reviewer')).toEqual(
      expect.arrayContaining(['load_skill', 'read_skill_resource']),
    );
  });

  it('load_skill returns the method and the resource list (L2); scripts are text, never run', async () => {
    const { call } = runTools();
    const loaded = data(await call('load_skill', { name: 'hooks' }));
    expect(loaded.content).toBe(BODY);
    expect(loaded.resources).toEqual([
      { path: 'reference/types.md', bytes: Buffer.byteLength(REFERENCE) },
      { path: 'scripts/count.py', bytes: Buffer.byteLength('print("never executed")') },
    ]);
    expect(String(loaded.note)).toContain('never executed');
    expect(await call('load_skill', { name: 'retired' })).toMatchObject({
      status: 'error',
      error_type: 'skill_not_found',
    });
    expect(await call('load_skill', { name: 'nope' })).toMatchObject({
      status: 'error',
      error_type: 'skill_not_found',
    });
  });

  it('read_skill_resource reads from an offset and says where to continue (L3)', async () => {
    const { call } = runTools();
    const first = data(
      await call('read_skill_resource', { name: 'hooks', path: 'reference/types.md', max_chars: 1000 }),
    );
    expect(first).toMatchObject({ offset: 0, end: 1000, total_chars: REFERENCE.length, next_offset: 1000 });
    const rest = data(
      await call('read_skill_resource', {
        name: 'hooks',
        path: 'reference/types.md',
        offset: 1000,
        max_chars: 20_000,
      }),
    );
    expect(`${first.content}${rest.content}`).toBe(REFERENCE);
    expect(rest.next_offset).toBeUndefined();
    const script = data(await call('read_skill_resource', { name: 'hooks', path: 'scripts/count.py' }));
    expect(script.content).toBe('print("never executed")');
    expect(data(await call('read_skill_resource', { name: 'hooks', path: 'SKILL.md' })).content).toBe(BODY);
    expect(await call('read_skill_resource', { name: 'hooks', path: '../etc/passwd' })).toMatchObject({
      status: 'error',
      error_type: 'resource_not_found',
    });
  });

  it('allows at most three distinct skills per request, rereads of the same skill included', async () => {
    const { call, runId } = runTools();
    for (const name of ['hooks', 'pacing', 'dialogue'])
      expect((await call('load_skill', { name })).status).toBe('ok');
    expect(await call('load_skill', { name: 'worldbuilding' })).toMatchObject({
      status: 'error',
      error_type: 'skill_limit_reached',
    });
    expect(await call('read_skill_resource', { name: 'worldbuilding', path: 'SKILL.md' })).toMatchObject({
      status: 'error',
      error_type: 'skill_limit_reached',
    });
    expect((await call('read_skill_resource', { name: 'pacing', path: 'scripts/count.py' })).status).toBe(
      'ok',
    );
    expect((await skillReadUsage(database.pool, runId)).skills.sort()).toEqual([
      'dialogue',
      'hooks',
      'pacing',
    ]);
    // A new request starts with a fresh allowance.
    expect((await runTools().call('load_skill', { name: 'worldbuilding' })).status).toBe('ok');
  });

  it('cuts a read to the remaining skill token budget, then refuses once it is spent', async () => {
    const budget = estimateTextTokens(BODY) + 300;
    const { call, runId } = runTools({ skillTokenBudget: budget });
    expect((await call('load_skill', { name: 'hooks' })).status).toBe('ok');
    const cut = data(
      await call('read_skill_resource', { name: 'hooks', path: 'reference/types.md', max_chars: 20_000 }),
    );
    expect(String(cut.content).length).toBeLessThan(REFERENCE.length);
    expect(cut.next_offset).toBe(String(cut.content).length);
    const usage = await skillReadUsage(database.pool, runId);
    expect(usage.usedTokens).toBeLessThanOrEqual(budget);
    expect(
      await call('read_skill_resource', { name: 'hooks', path: 'reference/types.md', offset: 10 }),
    ).toMatchObject({
      status: 'error',
      error_type: 'skill_budget_exhausted',
    });
  });
});
