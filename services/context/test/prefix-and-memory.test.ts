import { randomUUID } from 'node:crypto';
import type { ChatMessage } from '@quill/contracts';
import type { ProjectFile } from '@quill/db';
import { appendMessage, createProject, saveSkillPackage } from '@quill/db/gateway';
import { createTestDatabase, type TestDatabase } from '@quill/db/testing';
import { createFile } from '@quill/db/workers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compilerFor, createUserIn, newSession, startTurn, type TurnFixture, traceOf } from './support.ts';

let database: TestDatabase;
let userId: string;
let projectId: string;
const files: Record<string, ProjectFile> = {};

beforeAll(async () => {
  database = await createTestDatabase();
  userId = await createUserIn(database);
  projectId = (
    await createProject(database.pool, { ownerId: userId, title: '雨夜书店', notes: '第三人称。' })
  ).id;
  const add = async (key: string, title: string, fileType: string, content: string, visibility = 'all') => {
    files[key] = await createFile(database.pool, { projectId, title, fileType, folder: '', content });
    if (visibility !== 'all') {
      await database.pool.query('UPDATE files SET visibility = $2 WHERE id = $1', [
        files[key]!.id,
        visibility,
      ]);
    }
  };
  await add('outline', '全书大纲', 'outline', '第一章雨夜；第二章旧信；第三章铜铃。');
  await add('lin', '林晚', 'character', '林晚，二十岁，旧书店店员。');
  await add('ch1', '第一章 雨夜', 'draft', '林晚在雨夜推开旧书店的门。'.repeat(20));
  await add('ch2', '第二章 旧信', 'draft', '一封旧信从书页里滑落。'.repeat(20));
  await add('ch3', '第三章 铜铃', 'draft', '铜铃在风里响了三下。'.repeat(20));
  await add('plannerOnly', '伏笔清单', 'note', '凶手是钟表匠。', 'private_to:planner');
  await saveSkillPackage(database.pool, userId, {
    name: 'suspense-hooks',
    description: '为章节结尾设计悬念钩子',
    content: '每章结尾留一个未解的问题。',
    metadata: { name: 'suspense-hooks', description: '为章节结尾设计悬念钩子' },
    resources: [],
  });
});

afterAll(async () => {
  await database?.drop();
});

async function fixture(): Promise<TurnFixture> {
  return { projectId, userId, sessionId: await newSession(database, projectId, userId) };
}

const crumbs = (entries: Partial<Record<'created' | 'edited' | 'deleted' | 'read', ProjectFile[]>>) => ({
  v: 1,
  created: (entries.created ?? []).map((file) => ({ file_id: file.id, title: file.title })),
  edited: (entries.edited ?? []).map((file) => ({ file_id: file.id, title: file.title })),
  deleted: (entries.deleted ?? []).map((file) => ({ file_id: file.id, title: file.title })),
  read: (entries.read ?? []).map((file) => ({ file_id: file.id, title: file.title })),
});

async function endTurn(turn: TurnFixture, runId: string, reply: string, breadcrumbs: unknown) {
  await appendMessage(database.pool, {
    sessionId: turn.sessionId,
    runId,
    role: 'assistant',
    content: reply,
    breadcrumbs,
  });
}

const prefixOf = (messages: ChatMessage[]) => messages.slice(0, -1);

describe('cache-stable layout', () => {
  it('[system][history] is byte-identical across the roles of a turn and a prefix of the next turn', async () => {
    const turn = await fixture();
    const compile = compilerFor(database);
    const first = await startTurn(database, turn, '写第一章', { role: 'writer' });
    const writer = await compile(first);
    const reviewer = await compile({ ...first, role: 'quality_reviewer', step: 1 });
    const planner = await compile({ ...first, role: 'planner', step: 2 });
    if (!writer.ok || !reviewer.ok || !planner.ok) throw new Error('compile failed');
    expect(JSON.stringify(prefixOf(reviewer.messages))).toBe(JSON.stringify(prefixOf(writer.messages)));
    expect(JSON.stringify(prefixOf(planner.messages))).toBe(JSON.stringify(prefixOf(writer.messages)));
    // The L1 skill catalog is part of the stable system prompt.
    expect(writer.messages[0]?.content).toContain('- suspense-hooks：为章节结尾设计悬念钩子');
    // Per-turn context lives in the user message, not in the prefix.
    expect(JSON.stringify(prefixOf(writer.messages))).not.toContain('## 项目上下文');

    // The run ends: it read the planner-only note (a private title must not reach the shared prefix).
    await endTurn(
      turn,
      first.run_id,
      '第一章写好了。',
      crumbs({ created: [files.ch1!], read: [files.plannerOnly!] }),
    );
    const second = await startTurn(database, turn, '继续写第二章', { role: 'writer' });
    const next = await compile(second);
    const nextReviewer = await compile({ ...second, role: 'quality_reviewer', step: 1 });
    if (!next.ok || !nextReviewer.ok) throw new Error('compile failed');
    expect(JSON.stringify(next.messages.slice(0, writer.messages.length - 1))).toBe(
      JSON.stringify(prefixOf(writer.messages)),
    );
    expect(JSON.stringify(prefixOf(nextReviewer.messages))).toBe(JSON.stringify(prefixOf(next.messages)));
    const history = prefixOf(next.messages).slice(1);
    expect(history).toEqual([
      { role: 'user', content: '写第一章' },
      {
        role: 'assistant',
        content: `第一章写好了。\n\n[此前的工具操作]\n- 创建：第一章 雨夜 (id=${files.ch1!.id})`,
      },
    ]);
  });
});

describe('cross-turn memory', () => {
  it('puts the files of the last two replies, whole and current, before the author’s words', async () => {
    const turn = await fixture();
    const compile = compilerFor(database);
    const one = await startTurn(database, turn, '写第一章');
    await endTurn(turn, one.run_id, '写好了第一章。', crumbs({ created: [files.ch1!] }));
    const two = await startTurn(database, turn, '看看大纲');
    await endTurn(turn, two.run_id, '大纲读完了。', crumbs({ read: [files.outline!] }));
    const three = await startTurn(database, turn, '改第二章');
    await endTurn(turn, three.run_id, '第二章改好了。', crumbs({ edited: [files.ch2!] }));
    // The author edits chapter 2 after the run: the working set shows the current text.
    await database.pool.query('UPDATE files SET content = $2 WHERE id = $1', [
      files.ch2!.id,
      '作者改过的第二章。',
    ]);

    const four = await startTurn(database, turn, '接着写第三章', { focus: files.ch3!.id });
    const reply = await compile(four);
    if (!reply.ok) throw new Error(reply.code);
    const user = reply.messages.at(-1)!.content!;
    // Order: <turn_context>, then the working set, then the author's words.
    const workingSetAt = user.indexOf('</turn_context>\n\n<working_set>\n');
    expect(user.startsWith('<turn_context>')).toBe(true);
    expect(workingSetAt).toBeGreaterThan(0);
    expect(user.indexOf('接着写第三章')).toBeGreaterThan(user.indexOf('</working_set>'));
    const workingSet = user.slice(workingSetAt, user.indexOf('</working_set>'));
    expect(workingSet).toContain(`第二章 旧信 (id=${files.ch2!.id}) [全文]\n作者改过的第二章。`);
    expect(workingSet).toContain(`全书大纲 (id=${files.outline!.id}) [全文]\n${files.outline!.content}`);
    // Only the last two replies: chapter 1 (three replies ago) is not in the working set.
    expect(workingSet).not.toContain(files.ch1!.id);
    // Shown whole in the working set, the outline is referenced, not repeated, in the context.
    expect(user).toContain(`全书大纲 (id=${files.outline!.id}) [全文见本消息的 <working_set>]`);
    // Never in the system prompt or history.
    expect(JSON.stringify(prefixOf(reply.messages))).not.toContain('[跨轮工作集');
    const trace = await traceOf(database, four.run_id);
    expect(
      trace.loaded.filter((loaded) => loaded.source === 'working_set').map((loaded) => loaded.file_id),
    ).toEqual([files.ch2!.id, files.outline!.id]);
    expect(trace.excluded).toContainEqual(
      expect.objectContaining({ file_id: files.outline!.id, reason: 'duplicate', source: 'outline' }),
    );
    // Every assistant message of the history ends with its breadcrumbs.
    const assistants = prefixOf(reply.messages).filter((message) => message.role === 'assistant');
    expect(assistants.map((message) => message.content?.split('\n\n').at(-1))).toEqual([
      `[此前的工具操作]\n- 创建：第一章 雨夜 (id=${files.ch1!.id})`,
      `[此前的工具操作]\n- 读取全文：全书大纲 (id=${files.outline!.id})`,
      `[此前的工具操作]\n- 编辑：第二章 旧信 (id=${files.ch2!.id})`,
    ]);
  });

  it('keeps the working set within its file and character limits, and says so in the trace', async () => {
    const turn = await fixture();
    const one = await startTurn(database, turn, '写两章');
    await endTurn(turn, one.run_id, '写好了。', crumbs({ created: [files.ch1!, files.ch3!] }));
    const two = await startTurn(database, turn, '继续');
    const reply = await compilerFor(database, { workingSet: { maxFiles: 1, maxChars: 60_000 } })(two);
    if (!reply.ok) throw new Error(reply.code);
    const trace = await traceOf(database, two.run_id);
    expect(trace.loaded.filter((loaded) => loaded.source === 'working_set')).toHaveLength(1);
    expect(trace.excluded).toContainEqual(
      expect.objectContaining({ source: 'working_set', reason: 'limit', detail: 'max files' }),
    );
  });
});

describe('history budget without compaction', () => {
  it('drops the oldest whole turns to fit and records them in the trace', async () => {
    const turn = await fixture();
    for (let index = 0; index < 6; index++) {
      const runId = randomUUID();
      await appendMessage(database.pool, {
        sessionId: turn.sessionId,
        runId,
        role: 'user',
        content: `第${index}轮：${'写'.repeat(150)}`,
      });
      await appendMessage(database.pool, {
        sessionId: turn.sessionId,
        runId,
        role: 'assistant',
        content: '好'.repeat(150),
      });
    }
    const request = await startTurn(database, turn, '继续');
    const reply = await compilerFor(database, { historyTokens: 700, compactionEnabled: false })(request);
    if (!reply.ok) throw new Error(reply.code);
    const history = prefixOf(reply.messages).slice(1);
    expect(history.length).toBeGreaterThan(0);
    expect(history.length).toBeLessThan(12);
    expect(history[0]?.role).toBe('user');
    expect(history.at(-1)?.content).toBe('好'.repeat(150));
    const trace = await traceOf(database, request.run_id);
    expect(trace.usage.history_tokens).toBeLessThanOrEqual(700);
    expect(trace.history.dropped_messages).toBe(12 - history.length);
    expect(trace.excluded).toContainEqual(expect.objectContaining({ source: 'history', reason: 'budget' }));
  });
});
