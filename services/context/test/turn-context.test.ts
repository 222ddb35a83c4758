import type { ChatMessage } from '@quill/contracts';
import type { ProjectFile } from '@quill/db';
import { clearStoredPrompts } from '@quill/db/context';
import { createProject } from '@quill/db/gateway';
import { createTestDatabase, type TestDatabase } from '@quill/db/testing';
import { createFile, saveFileContent } from '@quill/db/workers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPromptRetention } from '../src/prompt-retention.ts';
import {
  compilerFor,
  createUserIn,
  newSession,
  silentLogger,
  startTurn,
  type TurnFixture,
} from './support.ts';

/**
 * One turn context per run (docs/agent-behaviour.md 「本轮上下文」): every step and role of a run
 * gets the same bytes up to and including `</turn_context>`, even when the run writes files and
 * the task board in between, so the provider's prefix cache covers it.
 */
let database: TestDatabase;
let turn: TurnFixture;
let chapter: ProjectFile;
let plannerNote: ProjectFile;

beforeAll(async () => {
  database = await createTestDatabase();
  const userId = await createUserIn(database);
  const projectId = (
    await createProject(database.pool, { ownerId: userId, title: '雨夜书店', notes: '第三人称，克制。' })
  ).id;
  turn = { projectId, userId, sessionId: await newSession(database, projectId, userId) };
  await createFile(database.pool, {
    projectId,
    title: '全书大纲',
    fileType: 'outline',
    content: '第一章雨夜。',
  });
  await createFile(database.pool, {
    projectId,
    title: '林晚',
    fileType: 'character',
    content: '林晚，店员。',
  });
  chapter = await createFile(database.pool, {
    projectId,
    title: '第一章 雨夜',
    fileType: 'draft',
    content: '林晚推开门。',
  });
  plannerNote = await createFile(database.pool, {
    projectId,
    title: '伏笔清单',
    fileType: 'note',
    content: '凶手是钟表匠。',
  });
  await database.pool.query("UPDATE files SET visibility = 'private_to:planner' WHERE id = $1", [
    plannerNote.id,
  ]);
});

afterAll(async () => {
  await database?.drop();
});

const userOf = (messages: ChatMessage[]) => messages.at(-1)!.content!;
/** [system][history] and the user message up to and including `</turn_context>`. */
const prefixOf = (messages: ChatMessage[]) => {
  const user = userOf(messages);
  const end = user.indexOf('</turn_context>');
  expect(end).toBeGreaterThan(0);
  return JSON.stringify([...messages.slice(0, -1), user.slice(0, end + '</turn_context>'.length)]);
};

describe('one turn context per run', () => {
  it('planner, writer and reviewer of one run share the prefix up to and including the turn context', async () => {
    const compile = compilerFor(database);
    const request = await startTurn(database, turn, '规划并写第一章 雨夜，参考《伏笔清单》', {
      role: 'planner',
      focus: chapter.id,
    });
    const planner = await compile(request);
    if (!planner.ok) throw new Error(planner.code);

    // The run writes between the steps: the chapter's body and the task board.
    await saveFileContent(database.pool, {
      fileId: chapter.id,
      content: '雨停了，林晚在柜台后写信。',
      source: 'ai',
      runId: request.run_id,
    });
    await database.pool.query('UPDATE projects SET task_board = $2 WHERE id = $1', [
      turn.projectId,
      JSON.stringify([{ title: '写第一章', status: 'done' }]),
    ]);
    const writer = await compile({ ...request, role: 'writer', step: 1 });
    const reviewer = await compile({ ...request, role: 'quality_reviewer', step: 2 });
    if (!writer.ok || !reviewer.ok) throw new Error('compile failed');

    expect(prefixOf(writer.messages)).toBe(prefixOf(planner.messages));
    expect(prefixOf(reviewer.messages)).toBe(prefixOf(planner.messages));
    const shared = userOf(planner.messages).slice(0, userOf(planner.messages).indexOf('</turn_context>'));
    // The turn context is the run's start: the chapter as it was, no role-private file.
    expect(shared).toContain('林晚推开门。');
    expect(shared).not.toContain('凶手是钟表匠');
    expect(shared).not.toContain(plannerNote.id);
    // What only one role sees comes after it.
    expect(userOf(planner.messages)).toContain('凶手是钟表匠。');
    expect(userOf(writer.messages)).not.toContain('凶手是钟表匠');
    const reviewerOwn = userOf(reviewer.messages).slice(userOf(reviewer.messages).indexOf('</turn_context>'));
    expect(reviewerOwn).toContain('<role_context>');
    expect(reviewerOwn).toContain('雨停了，林晚在柜台后写信。');
  });

  it('two steps compiling the run’s first context at once still end up with one', async () => {
    const compile = compilerFor(database);
    const request = await startTurn(database, turn, '写第一章 雨夜', { focus: chapter.id });
    const [writer, planner] = await Promise.all([
      compile(request),
      compile({ ...request, role: 'planner', step: 1 }),
    ]);
    if (!writer.ok || !planner.ok) throw new Error('compile failed');
    expect(prefixOf(planner.messages)).toBe(prefixOf(writer.messages));
    const { rows } = await database.pool.query(
      'SELECT count(*)::int AS n FROM run_turn_contexts WHERE run_id = $1',
      [request.run_id],
    );
    expect(rows[0].n).toBe(1);
  });

  it('a redelivered step gets the prompt its first delivery ran with, stored with its trace', async () => {
    const compile = compilerFor(database);
    // A reviewer step: its role context holds the current text of what the run wrote.
    const request = await startTurn(database, turn, '审查第一章 雨夜', {
      role: 'quality_reviewer',
      focus: chapter.id,
    });
    const first = await compile(request);
    if (!first.ok) throw new Error(first.code);
    // The run wrote the chapter after the step's first compile.
    await saveFileContent(database.pool, {
      fileId: chapter.id,
      content: '雨又下了起来，林晚关上了店门。',
      source: 'ai',
      runId: request.run_id,
    });
    const again = await compile({ ...request, reuse: true });
    if (!again.ok) throw new Error(again.code);
    expect(again.messages).toEqual(first.messages);
    const traces = async () =>
      (
        await database.pool.query<{ n: number }>(
          'SELECT count(*)::int AS n FROM context_traces WHERE run_id = $1 AND role = $2 AND step = 0',
          [request.run_id, 'quality_reviewer'],
        )
      ).rows[0]!.n;
    expect(await traces()).toBe(1);
    // Compiled afresh, the step would see what was written since.
    const fresh = await compile(request);
    if (!fresh.ok) throw new Error(fresh.code);
    expect(JSON.stringify(fresh.messages)).toContain('雨又下了起来');
    expect(JSON.stringify(first.messages)).not.toContain('雨又下了起来');
    expect(await traces()).toBe(2);
  });

  it('clears stored prompts past their retention, keeps the traces, and a late redelivery compiles afresh', async () => {
    const compile = compilerFor(database);
    const stored = async (runId: string) =>
      (
        await database.pool.query<{ prompts: number; traces: number }>(
          `SELECT count(messages)::int AS prompts, count(*)::int AS traces
           FROM context_traces WHERE run_id = $1`,
          [runId],
        )
      ).rows[0]!;
    const old = await startTurn(database, turn, '写第二章');
    const recent = await startTurn(database, turn, '写第三章');
    for (const request of [old, old, recent]) {
      const reply = await compile(request);
      if (!reply.ok) throw new Error(reply.code);
    }
    await database.pool.query(
      "UPDATE context_traces SET created_at = now() - interval '2 hours' WHERE run_id = $1",
      [old.run_id],
    );
    expect(await stored(old.run_id)).toEqual({ prompts: 2, traces: 2 });
    // One row per batch: the pass goes on until nothing old is left.
    expect(await clearStoredPrompts(database.pool, { olderThanMs: 3_600_000, batch: 1 })).toBe(2);
    expect(await stored(old.run_id)).toEqual({ prompts: 0, traces: 2 });
    expect(await stored(recent.run_id)).toEqual({ prompts: 1, traces: 1 });
    const late = await compile({ ...old, reuse: true });
    if (!late.ok) throw new Error(late.code);
    expect(await stored(old.run_id)).toEqual({ prompts: 1, traces: 3 });

    // The service's timer runs the same pass.
    await database.pool.query(
      "UPDATE context_traces SET created_at = now() - interval '2 hours' WHERE run_id = $1",
      [recent.run_id],
    );
    const stop = startPromptRetention({
      pool: database.pool,
      logger: silentLogger,
      retentionMs: 3_600_000,
      everyMs: 20,
    });
    try {
      await expect.poll(async () => (await stored(recent.run_id)).prompts, { timeout: 30_000 }).toBe(0);
    } finally {
      await stop();
    }
    expect((await stored(old.run_id)).prompts).toBe(1);
  });
});
