import type { AgentRole, ContextCompileRequest } from '@quill/contracts';
import type { FileSummary, HistoryMessage } from '@quill/db';
import { describe, expect, it } from 'vitest';
import type { TokenCounter } from '../src/budget.ts';
import {
  type CompileInputs,
  composeRolePrompt,
  composeTurn,
  finishCompile,
  historyInput,
} from '../src/compose.ts';
import { planHistoryWindow } from '../src/history-window.ts';
import { DEFAULT_SETTINGS } from './support.ts';

/**
 * The compiler's pure part over hand-made inputs: no database, no model, no clock. What the
 * loader would have read is written out here, so every rule is checked on plain values.
 */
const count: TokenCounter = (text) => Math.ceil(text.length / 2);

const summary = (id: string, title: string, fileType: string, content: string, visibility = 'all') => ({
  file: {
    id,
    folder: '',
    title,
    fileType,
    visibility,
    chars: content.length,
    version: 1,
    createdAt: 't0',
    updatedAt: 't0',
    unaccepted: null,
  } satisfies FileSummary,
  content,
});

const project = [
  summary('outline', '全书大纲', 'outline', '第一章雨夜；第二章旧信。'),
  summary('lin', '林晚', 'character', '林晚，二十岁，旧书店店员。'),
  summary('ch1', '第一章 雨夜', 'draft', '林晚在雨夜推开旧书店的门。'.repeat(10)),
  summary('secret', '伏笔清单', 'note', '凶手是钟表匠。', 'private_to:planner'),
  summary('author', '作者私记', 'note', '原型是外公。', 'author_only'),
];

function request(
  role: AgentRole,
  step: number,
  message = '写第一章 雨夜，参考《伏笔清单》',
): ContextCompileRequest {
  return {
    v: 1,
    run_id: 'run-1',
    session_id: 'session-1',
    project_id: 'project-1',
    user_id: 'user-1',
    role,
    message,
    focus_file_id: 'ch1',
    attached_file_ids: [],
    ui_language: 'zh',
    step,
  };
}

function inputsFor(
  role: AgentRole,
  step: number,
  overrides: Partial<CompileInputs> = {},
  contents = new Map(project.map((entry) => [entry.file.id, entry.content])),
): CompileInputs {
  return {
    request: request(role, step),
    compiledAt: '2026-01-01T00:00:00.000000Z',
    project: { title: '雨夜书店', projectType: 'novel', notes: '第三人称。' },
    summaries: project.map((entry) => entry.file),
    reviewTargets: [],
    catalog: [],
    recent: [],
    compaction: null,
    archiveTitle: undefined,
    stored: [],
    storedTurn: null,
    taskBoard: [{ title: '写第一章', status: 'doing' }],
    chosenSkills: new Map(),
    contents,
    sharedHits: [],
    roleHits: [],
    ...overrides,
  };
}

function compile(inputs: CompileInputs) {
  const { record } = composeTurn(inputs, DEFAULT_SETTINGS, count);
  const prompt = composeRolePrompt(inputs, record, DEFAULT_SETTINGS, count);
  const plan = planHistoryWindow(historyInput(inputs, prompt, DEFAULT_SETTINGS, count));
  if (plan.kind !== 'window') throw new Error('unexpected compaction');
  return { record, ...finishCompile(inputs, record, prompt, plan.window, DEFAULT_SETTINGS) };
}

const userOf = (messages: Array<{ content?: string | null }>) => messages.at(-1)!.content!;
const turnOf = (user: string) => user.slice(0, user.indexOf('</turn_context>') + '</turn_context>'.length);

describe('compose (pure)', () => {
  it('builds the turn context from the files every role sees, with the trace of what it loaded', () => {
    const writer = compile(inputsFor('writer', 0));
    const user = userOf(writer.messages);
    const turn = turnOf(user);
    expect(turn.startsWith('<turn_context>\n## 叙事约束\n第三人称。')).toBe(true);
    expect(turn).toContain('第一章 雨夜 (id=ch1) [全文]');
    expect(turn).toContain('## 任务板');
    expect(turn).toContain('## 本轮回复语言\n本轮回复语言：中文');
    // Neither another role's private file nor an author-only one: not in the turn, not anywhere.
    expect(JSON.stringify(writer.messages)).not.toContain('凶手是钟表匠');
    expect(JSON.stringify(writer.messages)).not.toContain('原型是外公');
    expect(user.endsWith('写第一章 雨夜，参考《伏笔清单》')).toBe(true);
    expect(writer.trace.loaded).toContainEqual(
      expect.objectContaining({ file_id: 'ch1', source: 'focus', tier: 'critical', full: true }),
    );
    expect(writer.trace.excluded).toContainEqual(
      expect.objectContaining({ file_id: 'secret', reason: 'visibility', detail: 'private_to:planner' }),
    );
    expect(writer.trace.compiled_at).toBe('2026-01-01T00:00:00.000000Z');
  });

  it('gives a role its private files after the shared turn context, which stays byte-identical', () => {
    const writer = compile(inputsFor('writer', 0));
    // The planner's step reuses the run's turn context as the first compile built it.
    const planner = compile(inputsFor('planner', 1, { storedTurn: writer.record }));
    const plannerUser = userOf(planner.messages);
    expect(turnOf(plannerUser)).toBe(turnOf(userOf(writer.messages)));
    expect(plannerUser).toContain('<role_context>');
    expect(plannerUser.indexOf('凶手是钟表匠。')).toBeGreaterThan(plannerUser.indexOf('</turn_context>'));
    expect(planner.trace.loaded).toContainEqual(
      expect.objectContaining({ file_id: 'secret', tier: 'critical', permission: 'private_to:planner' }),
    );
    // The shared part's trace entries are listed for every step that reuses it.
    expect(planner.trace.loaded).toContainEqual(expect.objectContaining({ file_id: 'ch1', source: 'focus' }));
    // Same first compile, same bytes: the decision depends on the inputs only.
    expect(compile(inputsFor('writer', 0)).messages).toEqual(writer.messages);
  });

  it('shows the reviewer what the run wrote in its own part; the turn context keeps the start of the run', () => {
    const writer = compile(inputsFor('writer', 0));
    const contents = new Map(project.map((entry) => [entry.file.id, entry.content]));
    contents.set('ch1', '第一章的新正文：雨停了。');
    const reviewer = compile(
      inputsFor('quality_reviewer', 1, { storedTurn: writer.record, reviewTargets: ['ch1'] }, contents),
    );
    const user = userOf(reviewer.messages);
    expect(turnOf(user)).toBe(turnOf(userOf(writer.messages)));
    const own = user.slice(user.indexOf('<role_context>'), user.indexOf('</role_context>'));
    expect(own).toContain('第一章 雨夜 (id=ch1) [全文]\n第一章的新正文：雨停了。');
    expect(reviewer.trace.loaded).toContainEqual(
      // Its own entry, over the text the run wrote (the shared one counts the text at the start).
      expect.objectContaining({
        file_id: 'ch1',
        tier: 'critical',
        shown_chars: '第一章的新正文：雨停了。'.length,
      }),
    );
  });

  it('keeps a file the turn context refers to in the working set, even past the limits', () => {
    const reply: HistoryMessage = {
      id: 'm1',
      seq: 2,
      runId: 'earlier',
      role: 'assistant',
      content: '大纲改好了。',
      breadcrumbs: {
        v: 1,
        created: [],
        edited: [{ file_id: 'outline', title: '全书大纲' }],
        deleted: [],
        read: [],
      },
      createdAt: 't',
    };
    const first = compile(inputsFor('writer', 0, { recent: [reply] }));
    expect(first.record.workingSetIds).toEqual(['outline']);
    expect(turnOf(userOf(first.messages))).toContain('全书大纲 (id=outline) [全文见本消息的 <working_set>]');
    // The outline grew past the working set's character limit during the run.
    const contents = new Map(project.map((entry) => [entry.file.id, entry.content]));
    contents.set('outline', '长'.repeat(200));
    const tight = { ...DEFAULT_SETTINGS, workingSet: { maxFiles: 8, maxChars: 100 } };
    const inputs = inputsFor('planner', 1, { recent: [reply], storedTurn: first.record }, contents);
    const prompt = composeRolePrompt(inputs, first.record, tight, count);
    expect(prompt.workingSet.ids.has('outline')).toBe(true);
    expect(prompt.userContent).toContain(`全书大纲 (id=outline) [全文]\n${'长'.repeat(200)}`);
  });

  it('asks for compaction when history is over its allowance, and drops instead once compacted', () => {
    const stored: HistoryMessage[] = Array.from({ length: 12 }, (_, index) => ({
      id: `m${index}`,
      seq: index + 1,
      runId: `r${Math.floor(index / 2)}`,
      role: index % 2 === 0 ? 'user' : 'assistant',
      content: `第${index}条：${'话'.repeat(400)}`,
      breadcrumbs: null,
      createdAt: 't',
    }));
    const settings = { ...DEFAULT_SETTINGS, historyTokens: 800 };
    const inputs = inputsFor('writer', 0, { stored });
    const { record } = composeTurn(inputs, settings, count);
    const prompt = composeRolePrompt(inputs, record, settings, count);
    const first = planHistoryWindow(historyInput(inputs, prompt, settings, count));
    expect(first.kind).toBe('compact');
    if (first.kind !== 'compact') return;
    expect(first.evicted[0]?.seq).toBe(1);
    const throughSeq = first.evicted.at(-1)!.seq;
    const after = planHistoryWindow({
      ...historyInput(inputs, prompt, settings, count),
      compaction: {
        id: 'c1',
        sessionId: 'session-1',
        throughSeq,
        summary: '此前写了序章。',
        archiveFileId: 'archive-1',
        compactedMessages: throughSeq,
        createdAt: 't',
      },
      archiveTitle: '对话存档',
      mayCompact: false,
    });
    expect(after.kind).toBe('window');
    if (after.kind !== 'window') return;
    expect(after.window.messages[0]?.content).toContain('[此前对话摘要]\n此前写了序章。');
    expect(after.window.messages[0]?.content).toContain('对话存档 (id=archive-1)');
    expect(after.window.tokens).toBeLessThanOrEqual(800);
    expect(JSON.stringify(after.window.messages)).not.toContain('第0条');
  });
});
