import { randomUUID } from 'node:crypto';
import type { AgentRole } from '@quill/contracts';
import type { ProjectFile } from '@quill/db';
import { appendMessage, createProject } from '@quill/db/gateway';
import { createTestDatabase, type TestDatabase } from '@quill/db/testing';
import { createFile, saveFileContent } from '@quill/db/workers';
import { createToolRunState, executeTool, type ToolResult } from '@quill/tools';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compilerFor, createUserIn, newSession, startTurn, type TurnFixture, traceOf } from './support.ts';

let database: TestDatabase;
let turn: TurnFixture;
let chapter: ProjectFile;
let plannerSecret: ProjectFile;
let authorNotes: ProjectFile;
let writerScratch: ProjectFile;

beforeAll(async () => {
  database = await createTestDatabase();
  const userId = await createUserIn(database);
  const projectId = (await createProject(database.pool, { ownerId: userId, title: '钟楼疑案' })).id;
  turn = { projectId, userId, sessionId: await newSession(database, projectId, userId) };
  const add = async (title: string, fileType: string, content: string, visibility: string) => {
    const file = await createFile(database.pool, { projectId, title, fileType, content });
    await database.pool.query('UPDATE files SET visibility = $2 WHERE id = $1', [file.id, visibility]);
    return { ...file, visibility };
  };
  chapter = await add('第一章 钟楼', 'draft', '钟楼的钟在午夜响了十三下，钟表匠站在阴影里。', 'all');
  plannerSecret = await add(
    '凶手的秘密',
    'note',
    '凶手是钟表匠，他在钟楼里藏了第十三个齿轮。',
    'private_to:planner',
  );
  authorNotes = await add('作者私记', 'note', '钟表匠的原型是我外公。', 'author_only');
  writerScratch = await add('写手草稿区', 'note', '钟楼场景的备选开头。', 'private_to:writer');
});

afterAll(async () => {
  await database?.drop();
});

const tool =
  (role: AgentRole, runId: string) =>
  (name: string, args: Record<string, unknown>): Promise<ToolResult> =>
    executeTool(name, JSON.stringify(args), {
      pool: database.pool,
      runId,
      epoch: 0,
      projectId: turn.projectId,
      userId: turn.userId,
      role,
      state: createToolRunState(),
    });

describe('information isolation (enforced by the compiler and query_files, not by prompts)', () => {
  it('never puts a file another role owns, or an author-only file, into a role’s context; the trace says so', async () => {
    // The request names the secret and matches its text, so only visibility can keep it out.
    const request = await startTurn(database, turn, '参考《凶手的秘密》和《作者私记》，写钟表匠在钟楼的齿轮');
    const reply = await compilerFor(database)(request);
    if (!reply.ok) throw new Error(reply.code);
    const everything = JSON.stringify(reply.messages);
    for (const hidden of [plannerSecret, authorNotes]) {
      expect(everything).not.toContain(hidden.id);
      expect(everything).not.toContain(hidden.content);
    }
    expect(everything).toContain(writerScratch.id);
    const trace = await traceOf(database, request.run_id, 'writer');
    expect(trace.excluded).toContainEqual(
      expect.objectContaining({
        file_id: plannerSecret.id,
        reason: 'visibility',
        detail: 'private_to:planner',
      }),
    );
    expect(trace.excluded).toContainEqual(
      expect.objectContaining({ file_id: authorNotes.id, reason: 'visibility', detail: 'author_only' }),
    );
    expect(trace.loaded.map((loaded) => loaded.file_id)).not.toContain(plannerSecret.id);

    // The planner may see its own file: referenced by the author, it is CRITICAL.
    const planner = await compilerFor(database)({ ...request, role: 'planner', step: 1 });
    if (!planner.ok) throw new Error(planner.code);
    expect(JSON.stringify(planner.messages)).toContain(plannerSecret.content);
    expect(JSON.stringify(planner.messages)).not.toContain(writerScratch.id);
    const plannerTrace = await traceOf(database, request.run_id, 'planner');
    expect(plannerTrace.loaded).toContainEqual(
      expect.objectContaining({
        file_id: plannerSecret.id,
        tier: 'critical',
        permission: 'private_to:planner',
      }),
    );
  });

  it('query_files neither lists, finds nor reads a file hidden from the calling role', async () => {
    const writer = tool('writer', randomUUID());
    const listed = await writer('query_files', {});
    expect(listed.status).toBe('ok');
    const titles = JSON.stringify(listed);
    expect(titles).toContain(chapter.id);
    expect(titles).not.toContain(plannerSecret.id);
    expect(titles).not.toContain(authorNotes.id);
    const found = await writer('query_files', { query: '齿轮' });
    expect(JSON.stringify(found)).not.toContain(plannerSecret.id);
    const read = await writer('query_files', { id: plannerSecret.id });
    expect(read).toMatchObject({ status: 'error', error_type: 'file_not_found' });
    // Exactly the answer a missing file gets: existence does not leak.
    const missing = await writer('query_files', { id: randomUUID() });
    expect(
      missing.status === 'error' && read.status === 'error' && missing.message.replace(/[0-9a-f-]{36}/, 'ID'),
    ).toBe(read.status === 'error' && read.message.replace(/[0-9a-f-]{36}/, 'ID'));
    const planner = tool('planner', randomUUID());
    expect(await planner('query_files', { id: plannerSecret.id })).toMatchObject({ status: 'ok' });
    expect(await planner('query_files', { id: authorNotes.id })).toMatchObject({ status: 'error' });
  });

  it('lets the reviewer see what the run wrote, even a writer-private file, and nothing else of it', async () => {
    const request = await startTurn(database, turn, '审阅这一轮写的内容');
    await saveFileContent(database.pool, {
      fileId: writerScratch.id,
      content: '钟楼场景的新开头：午夜的第十三响。',
      source: 'ai',
      runId: request.run_id,
    });
    const reply = await compilerFor(database)({ ...request, role: 'quality_reviewer', step: 1 });
    if (!reply.ok) throw new Error(reply.code);
    expect(JSON.stringify(reply.messages)).toContain('午夜的第十三响');
    expect(JSON.stringify(reply.messages)).not.toContain(plannerSecret.id);
    const trace = await traceOf(database, request.run_id, 'quality_reviewer');
    expect(trace.loaded).toContainEqual(
      expect.objectContaining({
        file_id: writerScratch.id,
        source: 'review_target',
        tier: 'critical',
        permission: 'review_target',
      }),
    );
    expect(
      await tool('quality_reviewer', request.run_id)('query_files', { id: writerScratch.id }),
    ).toMatchObject({
      status: 'ok',
    });
    // Another run's reviewer has nothing to review there.
    expect(
      await tool('quality_reviewer', randomUUID())('query_files', { id: writerScratch.id }),
    ).toMatchObject({
      status: 'error',
    });
    // The planner still does not see the writer's private file.
    const planner = await compilerFor(database)({ ...request, role: 'planner', step: 2 });
    if (!planner.ok) throw new Error(planner.code);
    expect(JSON.stringify(planner.messages)).not.toContain(writerScratch.id);
  });

  it('keeps a hidden file out of the working set and the shared history breadcrumbs', async () => {
    const session = { ...turn, sessionId: await newSession(database, turn.projectId, turn.userId) };
    const first = await startTurn(database, session, '规划伏笔');
    await appendMessage(database.pool, {
      sessionId: session.sessionId,
      runId: first.run_id,
      role: 'assistant',
      content: '伏笔已规划。',
      breadcrumbs: {
        v: 1,
        created: [],
        edited: [{ file_id: plannerSecret.id, title: plannerSecret.title }],
        deleted: [],
        read: [{ file_id: chapter.id, title: chapter.title }],
      },
    });
    const next = await startTurn(database, session, '继续写');
    const writer = await compilerFor(database)(next);
    if (!writer.ok) throw new Error(writer.code);
    const text = JSON.stringify(writer.messages);
    expect(text).not.toContain(plannerSecret.id);
    expect(text).not.toContain(plannerSecret.title);
    expect(text).toContain(`读取全文：${chapter.title} (id=${chapter.id})`);
    const trace = await traceOf(database, next.run_id);
    expect(trace.excluded).toContainEqual(
      expect.objectContaining({ source: 'working_set', file_id: plannerSecret.id, reason: 'visibility' }),
    );
  });
});
