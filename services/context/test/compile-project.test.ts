import type { TestDatabase } from '@quill/db/testing';
import { createTestDatabase } from '@quill/db/testing';
import { estimateTextTokens } from '@quill/llm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ChineseProject, seedChineseProject } from '../../../test/support/chinese-project.ts';
import { fullHeader } from '../src/render.ts';
import { compilerFor, createUserIn, newSession, startTurn, type TurnFixture, traceOf } from './support.ts';

let database: TestDatabase;
let project: ChineseProject;
let fixture: TurnFixture;

beforeAll(async () => {
  database = await createTestDatabase();
  const userId = await createUserIn(database);
  project = await seedChineseProject(database.pool, userId);
  fixture = {
    projectId: project.projectId,
    userId,
    sessionId: await newSession(database, project.projectId, userId),
  };
});

afterAll(async () => {
  await database?.drop();
});

function userContent(messages: Array<{ role: string; content: string | null }>): string {
  const last = messages.at(-1)!;
  expect(last.role).toBe('user');
  return last.content ?? '';
}

describe('compiling a 200-file Chinese project', () => {
  it('stays within the context budget and loads the right files at the right tiers', async () => {
    expect(project.files).toHaveLength(200);
    const focus = project.chapter(50);
    const request = await startTurn(database, fixture, '润色这一章，让沈砚在钟楼出场，呼应铜铃的线索', {
      focus: focus.id,
    });
    const reply = await compilerFor(database)(request);
    if (!reply.ok) throw new Error(reply.code);
    const content = userContent(reply.messages);
    expect(content.startsWith('<turn_context>')).toBe(true);
    expect(content.endsWith(request.message)).toBe(true);
    expect(content).toContain('## 叙事约束\n叙事约束：第三人称有限视角');
    expect(content).toContain(`## 当前文件\n${focus.title} (id=${focus.id})`);
    expect(content).toContain(`${fullHeader(focus.title, focus.id)}\n${focus.content}`);

    const trace = await traceOf(database, request.run_id, 'writer');
    expect(trace.usage.context_tokens).toBeLessThanOrEqual(32_000);
    // Measured on the rendered text itself, not only on the trace's sum of parts.
    const projectContext = content.slice(
      content.indexOf('## 项目上下文\n'),
      content.indexOf('\n\n## 当前文件'),
    );
    expect(estimateTextTokens(projectContext)).toBeLessThanOrEqual(32_000);
    expect(trace.usage.context_tokens).toBeGreaterThan(20_000);
    const loadedSum = trace.loaded
      .filter(
        (entry) => !['working_set', 'history', 'history_summary', 'chosen_skill'].includes(entry.source),
      )
      .reduce((sum, entry) => sum + entry.tokens, 0);
    expect(loadedSum).toBeLessThanOrEqual(32_000);

    const entry = (fileId: string) => trace.loaded.find((loaded) => loaded.file_id === fileId);
    expect(entry(focus.id)).toMatchObject({ source: 'focus', tier: 'critical', full: true });
    // Named in the request: boosted to the front of CONSTRAINT, ahead of the other characters.
    const shen = project.byTitle.get('沈砚')!;
    const bell = project.byTitle.get('钟楼')!;
    expect(entry(shen.id)).toMatchObject({ source: 'character', tier: 'constraint' });
    expect(entry(bell.id)).toMatchObject({ source: 'setting', tier: 'constraint' });
    const constraint = trace.loaded
      .filter((loaded) => loaded.tier === 'constraint')
      .map((loaded) => loaded.title);
    expect(constraint.slice(0, 3).sort()).toEqual(['沈砚', '钟楼', '铜铃'].sort());
    // Then the cast in play in the scene (focus + previous chapter), before any chapter text.
    const castOfScene = ['宋知意', '霍思齐', '苏念', '温言', '卫青梧', '顾长风'];
    expect(constraint.slice(3, 9).sort()).toEqual(castOfScene.sort());
    // Characters before the previous chapter, which is still CONSTRAINT.
    const previous = project.chapter(49);
    const previousEntry = trace.loaded.find((loaded) => loaded.file_id === previous.id);
    const previousExcluded = trace.excluded.find((excluded) => excluded.file_id === previous.id);
    expect((previousEntry ?? previousExcluded)?.source).toBe('previous_chapter');
    expect((previousEntry ?? previousExcluded)?.tier).toBe('constraint');

    const tiers = trace.loaded.filter((loaded) => loaded.tier).map((loaded) => loaded.tier!);
    const rank = { critical: 0, constraint: 1, relevant: 2, inspiration: 3 };
    expect(tiers.map((tier) => rank[tier])).toEqual(
      [...tiers.map((tier) => rank[tier])].sort((a, b) => a - b),
    );

    // 200 files cannot all fit: what was left out is in the trace, and still listed by id.
    const dropped = trace.excluded.filter((excluded) => excluded.reason === 'budget' && excluded.file_id);
    expect(dropped.length).toBeGreaterThan(0);
    for (const excluded of dropped) expect(content).toContain(`(id=${excluded.file_id})`);
    // Every chapter is listed in the index even though most have no content shown.
    for (const number of [1, 60, 120]) expect(content).toContain(`(id=${project.chapter(number).id})`);
  });

  it('adds retrieval snippets for text matching the request, excluding files already shown', async () => {
    const request = await startTurn(database, fixture, '写第八十一章：温言在废弃电台找到半截蜡烛');
    const reply = await compilerFor(database)(request);
    if (!reply.ok) throw new Error(reply.code);
    const content = userContent(reply.messages);
    const trace = await traceOf(database, request.run_id);
    const snippets = trace.loaded.filter((loaded) => loaded.source === 'retrieval');
    expect(snippets.length).toBeGreaterThan(0);
    for (const snippet of snippets) {
      expect(snippet.tier).toBe('relevant');
      expect(snippet.full).toBe(false);
      expect(content).toContain(`(id=${snippet.file_id}) [检索片段，非全文：`);
      const others = trace.loaded.filter(
        (loaded) => loaded.file_id === snippet.file_id && loaded !== snippet,
      );
      expect(others).toEqual([]);
    }
    expect(trace.loaded.find((loaded) => loaded.source === 'previous_chapter')?.file_id).toBe(
      project.chapter(80).id,
    );
  });

  it('truncates with the seed marker under a small budget and never exceeds it', async () => {
    const focus = project.chapter(10);
    const request = await startTurn(database, fixture, '继续润色', { focus: focus.id });
    const reply = await compilerFor(database, { contextTokens: 3_000 })(request);
    if (!reply.ok) throw new Error(reply.code);
    const content = userContent(reply.messages);
    const trace = await traceOf(database, request.run_id);
    expect(trace.usage.context_tokens).toBeLessThanOrEqual(3_000);
    const truncated = trace.loaded.find(
      (loaded) => loaded.source !== 'file_index' && !loaded.full && loaded.source !== 'retrieval',
    );
    expect(truncated).toBeDefined();
    expect(content).toContain(
      `(id=${truncated!.file_id}) [已截断：显示 ${truncated!.shown_chars}/${truncated!.total_chars} 字；全文用 query_files(id="${truncated!.file_id}")]`,
    );
    expect(estimateTextTokens(content)).toBeLessThan(3_000 + 400);
  });
});
