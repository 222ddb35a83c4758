import { describe, expect, it } from 'vitest';
import { publicBreadcrumbs } from '../src/history.ts';
import { excerptOf, planListing, renderListing } from '../src/project-index.ts';
import {
  fullHeader,
  renderBreadcrumbs,
  renderTurnContext,
  renderUserMessage,
  renderWorkingSet,
  snippetHeader,
  summaryMessage,
  truncatedHeader,
} from '../src/render.ts';

const ID = '3f1c2a9e-1234-4abc-8def-0123456789ab';

describe('rendering (the exact forms the seed specifies)', () => {
  it('item headers: full, truncated, retrieval snippet', () => {
    expect(fullHeader('第三章 铜铃', ID)).toMatchInlineSnapshot(
      `"第三章 铜铃 (id=3f1c2a9e-1234-4abc-8def-0123456789ab) [全文]"`,
    );
    expect(truncatedHeader('第三章 铜铃', ID, 1200, 3400)).toMatchInlineSnapshot(
      `"第三章 铜铃 (id=3f1c2a9e-1234-4abc-8def-0123456789ab) [已截断：显示 1200/3400 字；全文用 query_files(id="3f1c2a9e-1234-4abc-8def-0123456789ab")]"`,
    );
    expect(snippetHeader('灵感 3', ID, 40, 400, 900)).toMatchInlineSnapshot(
      `"灵感 3 (id=3f1c2a9e-1234-4abc-8def-0123456789ab) [检索片段，非全文：第 41–400 字，共 900 字；全文用 query_files(id="3f1c2a9e-1234-4abc-8def-0123456789ab")]"`,
    );
  });

  it('breadcrumbs after an assistant message, keeping only files every role may see', () => {
    const crumbs = {
      v: 1 as const,
      created: [{ file_id: 'a', title: '第一章 雨夜' }],
      edited: [{ file_id: 'b', title: '全书大纲' }],
      deleted: [{ file_id: 'gone', title: '旧草稿' }],
      read: [
        { file_id: 'c', title: '林晚' },
        { file_id: 'secret', title: '凶手的秘密' },
      ],
    };
    const visibility: Record<string, string> = { a: 'all', b: 'all', c: 'all', secret: 'private_to:planner' };
    expect(renderBreadcrumbs(publicBreadcrumbs(crumbs, (id) => visibility[id])!)).toMatchInlineSnapshot(`
      "[此前的工具操作]
      - 创建：第一章 雨夜 (id=a)
      - 编辑：全书大纲 (id=b)
      - 删除：旧草稿 (id=gone)
      - 读取全文：林晚 (id=c)"
    `);
  });

  it('turn context leads the user message, then the working set, then the author', () => {
    const turn = renderTurnContext({
      narrativeConstraints: '第三人称有限视角。',
      chosenSkills: ['### suspense-hooks [全文]\n每章结尾留一个问题。'],
      projectContext: '### 上下文条目\n#### CRITICAL（焦点、审阅对象与作者引用）\n第三章 (id=x) [全文]\n正文',
      currentFile: '第三章 (id=x)',
      taskBoard: '- [doing] 写第三章',
      languageLine: '本轮回复语言：中文',
    });
    const workingSet = renderWorkingSet(['第二章 (id=y) [全文]\n上一章正文']);
    expect(renderUserMessage(turn, workingSet, '润色第三章')).toMatchInlineSnapshot(`
      "<turn_context>
      ## 叙事约束
      第三人称有限视角。

      ## 本轮选用的技能
      ### suspense-hooks [全文]
      每章结尾留一个问题。

      ## 项目上下文
      ### 上下文条目
      #### CRITICAL（焦点、审阅对象与作者引用）
      第三章 (id=x) [全文]
      正文

      ## 当前文件
      第三章 (id=x)

      ## 任务板
      - [doing] 写第三章

      ## 本轮回复语言
      本轮回复语言：中文
      </turn_context>

      <working_set>
      [跨轮工作集：最近两轮回复读写过的文件，按当前内容整份给出]

      第二章 (id=y) [全文]
      上一章正文
      </working_set>

      润色第三章"
    `);
  });

  it('world model lists fully shown entries by title and id only; candidates stay listed when the index is cut', () => {
    const files = [
      { id: 'c1', folder: '角色', title: '林晚', fileType: 'character', chars: 800 },
      { id: 'c2', folder: '角色', title: '沈砚', fileType: 'character', chars: 800 },
      { id: 'd1', folder: '正文', title: '第一章', fileType: 'draft', chars: 3000 },
      { id: 'd2', folder: '正文', title: '第二章', fileType: 'draft', chars: 3000 },
    ];
    const excerpts = new Map([
      ['c1', '林晚，二十岁，旧书店的店员。'],
      ['c2', '沈砚，钟表匠。'],
    ]);
    const length = (text: string) => text.length;
    const roomy = planListing({ files, priority: ['d2'], excerpts, budget: 10_000, count: length });
    expect(renderListing(files, roomy, excerpts, new Set(['c1']))).toEqual({
      world: ['- 林晚 (id=c1)', '- 沈砚 (id=c2)：沈砚，钟表匠。'],
      index: ['- [draft] 正文/第一章 (id=d1) 3000 字', '- [draft] 正文/第二章 (id=d2) 3000 字'],
    });
    // Room for the candidate and little else: the rest is counted, not listed.
    const tight = planListing({ files, priority: ['d2'], excerpts, budget: 100, count: length });
    expect(renderListing(files, tight, excerpts, new Set())).toEqual({
      world: [],
      index: ['- [draft] 正文/第二章 (id=d2) 3000 字', '- ……另有 3 个文件未列出，用 query_files() 列出全部'],
    });
    expect(excerptOf(`# 标题\n${'很'.repeat(60)}`)).toBe(`${'很'.repeat(48)}……`);
  });

  it('the compaction summary names the archive that holds the full text', () => {
    expect(
      summaryMessage('作者要求第一章写雨夜。', { id: 'arch', title: '对话存档 1234abcd' }),
    ).toMatchInlineSnapshot(`
      "[此前对话摘要]
      作者要求第一章写雨夜。
      被压缩的完整原文已存档：对话存档 1234abcd (id=arch)，需要细节时用 query_files(id="arch") 读取。"
    `);
  });
});
