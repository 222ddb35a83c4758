import { getProjectWorkspace, readState } from '@quill/db';
import { commitState, createFile, updateProjectWorkspace } from '@quill/db/workers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONFIRMED_MARKER, NOTES_MAX_CHARS, PROPOSED_MARKER, parseNotes } from '../src/project-notes.ts';
import type { ToolProgress } from '../src/types.ts';
import { createToolFixture, errorType, okData, type ToolFixture } from './fixture.ts';

let fixture: ToolFixture;
beforeAll(async () => {
  fixture = await createToolFixture();
});
afterAll(async () => {
  await fixture?.close();
});

const workspace = async () => (await getProjectWorkspace(fixture.database.pool, fixture.projectId))!;

describe('update_project: notes', () => {
  it('replaces only the AI-proposed section; the author’s entries survive, even notes_proposals=""', async () => {
    await updateProjectWorkspace(fixture.database.pool, fixture.projectId, {
      notes: `旧的未标来源条目\n\n${CONFIRMED_MARKER}\n林晚怕雷声\n\n${PROPOSED_MARKER}\n旧提议`,
    });
    const context = await fixture.context();
    okData(
      await fixture.call(context, 'update_project', {
        notes_proposals: `${CONFIRMED_MARKER}\n（作者已确认）书店在江南\n1. 雨季三个月`,
      }),
    );
    expect(parseNotes((await workspace()).notes)).toEqual({
      untagged: '旧的未标来源条目',
      confirmed: '林晚怕雷声',
      // A marker in the proposals cannot promote an entry into the author's section.
      proposed: '（作者已确认）书店在江南\n1. 雨季三个月',
    });
    okData(await fixture.call(context, 'update_project', { notes_proposals: '' }));
    expect(parseNotes((await workspace()).notes)).toEqual({
      untagged: '旧的未标来源条目',
      confirmed: '林晚怕雷声',
      proposed: '',
    });
  });

  it('shares 4000 characters across the three sections and refuses proposals that do not fit', async () => {
    const before = (await workspace()).notes;
    const result = await fixture.call(await fixture.context(), 'update_project', {
      notes_proposals: '长'.repeat(NOTES_MAX_CHARS - 5),
    });
    expect(errorType(result)).toBe('notes_too_long');
    expect((await workspace()).notes).toBe(before);
  });
});

describe('update_project: info and title', () => {
  it('merges info and never renames the author’s project', async () => {
    const context = await fixture.context();
    okData(await fixture.call(context, 'update_project', { info: { genre: '悬疑' } }));
    okData(await fixture.call(context, 'update_project', { info: { target_words: 80000 } }));
    expect((await workspace()).info).toEqual({ genre: '悬疑', target_words: 80000 });
    const renamed = await fixture.call(context, 'update_project', {
      title: '新书名',
      info: { genre: '言情' },
    });
    expect(errorType(renamed)).toBe('project_title_protected');
    expect(await workspace()).toMatchObject({ title: '雨夜书店', info: { genre: '悬疑' } });
  });
});

describe('update_project: task board', () => {
  it('saves typed tasks, but a new done needs non-empty files of that type written in this request', async () => {
    const context = await fixture.context();
    const board = [
      { id: 't1', title: '写第1-2章', status: 'done', artifact_file_type: 'draft', unit_spec: '1-2' },
      { id: 't2', title: '整理设定', status: 'todo' },
    ];
    const noEvidence = await fixture.call(context, 'update_project', { task_board: board });
    expect(errorType(noEvidence)).toBe('done_without_evidence');
    expect((await workspace()).taskBoard).toEqual([]);

    // A chapter written by another request, and an outline heading, prove nothing.
    await createFile(fixture.database.pool, {
      projectId: fixture.projectId,
      title: '第一章',
      fileType: 'draft',
      content: '别处写的',
    });
    const created = okData(
      await fixture.call(context, 'create_file', {
        title: '第一章 雨夜',
        file_type: 'draft',
        folder: '正文',
      }),
    );
    okData(
      await fixture.call(context, 'edit_file', {
        id: created.file_id,
        operation: 'append',
        new_text: '雨夜。',
      }),
    );
    const outline = okData(
      await fixture.call(context, 'create_file', { title: '第二章大纲', file_type: 'outline' }),
    );
    okData(
      await fixture.call(context, 'edit_file', {
        id: outline.file_id,
        operation: 'append',
        new_text: '要点',
      }),
    );
    const partial = await fixture.call(context, 'update_project', { task_board: board });
    expect(errorType(partial)).toBe('done_without_evidence');
    expect(partial.status === 'error' && partial.message).toContain('unit 2');

    const second = okData(
      await fixture.call(context, 'create_file', {
        title: '第二章 书店',
        file_type: 'draft',
        folder: '正文',
      }),
    );
    okData(
      await fixture.call(context, 'edit_file', {
        id: second.file_id,
        operation: 'append',
        new_text: '书店。',
      }),
    );
    expect(okData(await fixture.call(context, 'update_project', { task_board: board }))).toMatchObject({
      tasks: 2,
    });
    expect((await workspace()).taskBoard).toEqual(board);

    // Already-done tasks need no new evidence in a later request; a new done without a type is refused.
    const later = await fixture.context();
    okData(await fixture.call(later, 'update_project', { task_board: board }));
    const untyped = await fixture.call(later, 'update_project', {
      task_board: [...board.slice(0, 1), { id: 't2', title: '整理设定', status: 'done' }],
    });
    expect(errorType(untyped)).toBe('done_without_evidence');
    expect(untyped.status === 'error' && untyped.message).toContain('artifact_file_type');
  });

  it('checks artifact_refs against what this request wrote', async () => {
    const context = await fixture.context();
    const stranger = await createFile(fixture.database.pool, {
      projectId: fixture.projectId,
      title: '角色卡',
      fileType: 'character',
      content: '已有',
    });
    const result = await fixture.call(context, 'update_project', {
      task_board: [
        {
          id: 'c1',
          title: '角色卡',
          status: 'done',
          artifact_file_type: 'character',
          artifact_refs: [stranger.id],
        },
      ],
    });
    expect(errorType(result)).toBe('done_without_evidence');
  });
});

describe('handoff_to_agent and request_clarification', () => {
  it('record one structured request per step for the router', async () => {
    const context = await fixture.context({ role: 'planner' });
    expect(
      errorType(await fixture.call(context, 'handoff_to_agent', { to_agent: 'planner', reason: 'x' })),
    ).toBe('invalid_handoff_target');
    okData(
      await fixture.call(context, 'handoff_to_agent', {
        to_agent: 'writer',
        reason: '大纲写好了，按大纲写第一章',
      }),
    );
    expect(context.state.handoff).toEqual({ to_agent: 'writer', reason: '大纲写好了，按大纲写第一章' });
    expect(errorType(await fixture.call(context, 'request_clarification', { question: '?' }))).toBe(
      'already_yielding',
    );

    const asking = await fixture.context();
    const data = okData(
      await fixture.call(asking, 'request_clarification', {
        question: '改哪一章？',
        options: ['第一章', '第二章'],
      }),
    );
    expect(data.question).toBe('改哪一章？\n1. 第一章\n2. 第二章');
    expect(asking.state.clarification).toEqual({ question: '改哪一章？\n1. 第一章\n2. 第二章' });
    expect(asking.state.handoff).toBeUndefined();
  });

  it('note_question_for_author records questions as data without ending the step', async () => {
    const context = await fixture.context();
    okData(await fixture.call(context, 'note_question_for_author', { question: '主角要改名吗？' }));
    okData(await fixture.call(context, 'note_question_for_author', { question: '主角要改名吗？' }));
    okData(await fixture.call(context, 'note_question_for_author', { question: '结尾要留悬念吗？' }));
    expect(context.state.authorQuestions).toEqual(['主角要改名吗？', '结尾要留悬念吗？']);
    expect(context.state.handoff).toBeUndefined();
    expect(context.state.clarification).toBeUndefined();
    expect(errorType(await fixture.call(context, 'note_question_for_author', { question: ' ' }))).toBe(
      'invalid_arguments',
    );
  });
});

describe('parallel_execute', () => {
  it('runs read-only calls with progress and returns results in order', async () => {
    const files = await Promise.all(
      ['甲', '乙', '丙', '丁'].map((title) =>
        createFile(fixture.database.pool, {
          projectId: fixture.projectId,
          title,
          fileType: 'note',
          content: `${title}的内容`,
        }),
      ),
    );
    const progress: ToolProgress[] = [];
    const context = {
      ...(await fixture.context()),
      reportProgress: (event: ToolProgress) => progress.push(event),
    };
    const data = okData(
      await fixture.call(context, 'parallel_execute', {
        calls: [
          ...files.map((file) => ({ tool: 'query_files', arguments: { id: file.id } })),
          { tool: 'query_files', arguments: { id: 'not-a-uuid' } },
        ],
      }),
    );
    const results = data.results as Array<{ tool: string; status: string; data?: { content: string } }>;
    expect(results.map((result) => result.status)).toEqual(['ok', 'ok', 'ok', 'ok', 'error']);
    expect(results.slice(0, 4).map((result) => result.data?.content)).toEqual([
      '甲的内容',
      '乙的内容',
      '丙的内容',
      '丁的内容',
    ]);
    expect(progress.map((event) => event.completed)).toEqual([1, 2, 3, 4, 5]);
    expect(progress.every((event) => event.total === 5)).toBe(true);
    // The reads count as seen, like direct reads.
    expect(context.state.pendingReads.size).toBe(4);
  });

  it('refuses the whole call when it asks for a tool that writes or is not read-only', async () => {
    const context = await fixture.context();
    const result = await fixture.call(context, 'parallel_execute', {
      calls: [
        { tool: 'query_files', arguments: {} },
        { tool: 'create_file', arguments: { title: '并行', file_type: 'draft' } },
        { tool: 'handoff_to_agent', arguments: { to_agent: 'writer', reason: 'x' } },
      ],
    });
    expect(errorType(result)).toBe('unsupported_parallel_tool');
    expect(context.state.pendingFile).toBeUndefined();
    expect(context.state.handoff).toBeUndefined();
  });
});

describe('update_project: info and task board are commits with rev', () => {
  it('the agent writes on the rev it last saw: an author change meanwhile merges per key, or refuses the call', async () => {
    const pool = fixture.database.pool;
    const context = await fixture.context();
    okData(await fixture.call(context, 'update_project', { info: { genre: '悬疑' } }));
    const rev = (await readState(pool, fixture.projectId, 'info'))!.rev;
    // The author changes the genre after the agent's commit.
    const author = { kind: 'author' as const, userId: crypto.randomUUID(), memberRole: 'owner' as const };
    const byAuthor = await commitState(pool, {
      projectId: fixture.projectId,
      key: 'info',
      baseRev: rev,
      value: { ...(await workspace()).info, genre: '推理' },
      writer: author,
    });
    expect(byAuthor).toMatchObject({ kind: 'committed', rev: rev + 1 });
    // The agent, still on its own commit, changes the same key: refused, nothing of the call saved.
    const boardBefore = (await workspace()).taskBoard;
    const refused = await fixture.call(context, 'update_project', {
      info: { genre: '科幻', style: '冷峻' },
      task_board: [{ id: 't1', title: '大纲', status: 'todo' }],
    });
    expect(errorType(refused)).toBe('state_conflict');
    expect((await workspace()).info).toMatchObject({ genre: '推理' });
    expect((await workspace()).info).not.toHaveProperty('style');
    expect((await workspace()).taskBoard).toEqual(boardBefore);
    // Another key merges with the author's change.
    okData(await fixture.call(context, 'update_project', { info: { style: '冷峻' } }));
    expect((await workspace()).info).toMatchObject({ genre: '推理', style: '冷峻' });
  });
});
