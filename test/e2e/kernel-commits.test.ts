import { ErrorResponse, type SseFrame } from '@quill/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authorApi } from '../support/background-run.ts';
import { readStream, startRun } from '../support/sse-client.ts';
import { type Stack, startStack } from '../support/stack.ts';

/**
 * Commits with rev for the project info and the task board (docs/kernel.md "Commits with rev"),
 * end to end: the author's routes and the agent's update_project write through one commit path;
 * a stale rev merges per key / per task or is refused with 409 naming the conflict, and the
 * commit log lists who wrote what.
 */
let stack: Stack;
beforeAll(async () => {
  stack = await startStack();
});
afterAll(async () => {
  await stack?.stop();
});

const api = (path: string, init: { method?: string; body?: unknown } = {}) => authorApi(stack, path, init);
const P = () => `/projects/${stack.projectId}`;
const putInfo = (info: Record<string, unknown>, expected_version: number) =>
  api(`${P()}/info`, { method: 'PUT', body: { info, expected_version } });
const putBoard = (tasks: unknown[], expected_version: number) =>
  api(`${P()}/task-board`, { method: 'PUT', body: { tasks, expected_version } });
const task = (id: string, title: string, status = 'todo') => ({ id, title, status });

/** One agent turn whose writer calls update_project with `args`, then answers. */
async function agentUpdates(args: Record<string, unknown>, gate?: string): Promise<SseFrame[]> {
  stack.fakeLlm.addScript({
    match: { role: 'writer' },
    responses: [
      {
        text: '',
        tool_calls: [{ name: 'update_project', arguments: args }],
        ...(gate ? { pause: gate } : {}),
      },
      { text: '项目已更新。', finish_reason: 'stop' },
    ],
  });
  const response = await startRun(stack.gateways[0]!, stack.apiKey, {
    project_id: stack.projectId,
    message: '写第一章之前，先整理项目信息和任务板',
  });
  expect(response.status).toBe(200);
  return (await readStream(response)).frames.map((received) => received.frame);
}
const toolResult = (frames: SseFrame[]) =>
  frames.find((frame) => frame.type === 'tool_result' && frame.tool_name === 'update_project') as
    | Extract<SseFrame, { type: 'tool_result' }>
    | undefined;

describe('project info: commits with rev', () => {
  it('author vs agent: a stale save merges per key, a key both changed is 409 naming it', async () => {
    expect((await api(`${P()}/info`)).body).toEqual({ info: {}, version: 0 });
    expect((await putInfo({ genre: '悬疑' }, 0)).body).toMatchObject({ info: { genre: '悬疑' }, version: 1 });

    // The agent sets the genre and a synopsis at rev 1.
    const frames = await agentUpdates({ info: { genre: '悬疑推理', synopsis: '旧书店里的一桩旧案。' } });
    expect(toolResult(frames)?.status).toBe('ok');
    expect((await api(`${P()}/info`)).body).toEqual({
      info: { genre: '悬疑推理', synopsis: '旧书店里的一桩旧案。' },
      version: 2,
    });

    // The author, still at rev 1, adds a style: merged, the agent's keys kept.
    const merged = await putInfo({ genre: '悬疑', style: '冷峻' }, 1);
    expect(merged).toMatchObject({
      status: 200,
      body: {
        info: { genre: '悬疑推理', synopsis: '旧书店里的一桩旧案。', style: '冷峻' },
        version: 3,
        merged: true,
      },
    });

    // Still at rev 1, the genre the agent changed: refused with what stands, nothing written.
    const refused = await putInfo({ genre: '科幻' }, 1);
    expect(refused).toMatchObject({
      status: 409,
      body: {
        error: { code: 'version_conflict' },
        current: { info: { genre: '悬疑推理', style: '冷峻' }, version: 3 },
        conflicts: ['genre'],
      },
    });
    expect((await api(`${P()}/info`)).body.version).toBe(3);
  });

  it('author vs author: two tabs at the same rev, the second change to the same key is 409', async () => {
    const { version, info } = (await api(`${P()}/info`)).body as { version: number; info: object };
    expect((await putInfo({ ...info, audience: '成年读者' }, version)).body.version).toBe(version + 1);
    const second = await putInfo({ ...info, audience: '青少年' }, version);
    expect(second).toMatchObject({ status: 409, body: { conflicts: ['audience'] } });
    // A different key from the same stale tab merges.
    const other = await putInfo({ ...info, target_words: 80000 }, version);
    expect(other.body).toMatchObject({ info: { audience: '成年读者', target_words: 80000 }, merged: true });
  });
});

describe('task board: commits with rev', () => {
  it('author vs agent: merged per task; a task both changed is 409 naming it', async () => {
    const start = await putBoard([task('t1', '人物小传'), task('t2', '大纲')], 0);
    expect(start.body).toMatchObject({ version: 1, merged: false });

    const frames = await agentUpdates({
      task_board: [task('t1', '人物小传', 'in_progress'), task('t2', '大纲'), task('t3', '第一章')],
    });
    expect(toolResult(frames)?.status).toBe('ok');
    expect((await api(`${P()}/task-board`)).body.version).toBe(2);

    // The author at rev 1 blocks t2: merged with the agent's t1 and t3.
    const merged = await putBoard([task('t1', '人物小传'), task('t2', '大纲', 'blocked')], 1);
    expect(merged).toMatchObject({
      status: 200,
      body: {
        tasks: [task('t1', '人物小传', 'in_progress'), task('t2', '大纲', 'blocked'), task('t3', '第一章')],
        version: 3,
        merged: true,
      },
    });

    // At rev 1 the author marks t1 done, which the agent moved to in_progress: refused.
    const refused = await putBoard([task('t1', '人物小传', 'done'), task('t2', '大纲')], 1);
    expect(refused).toMatchObject({
      status: 409,
      body: { error: { code: 'version_conflict' }, conflicts: ['task:t1'], current: { version: 3 } },
    });
    // The refusal is the documented error shape, its conflicts and current value included.
    expect(ErrorResponse.safeParse(refused.body).success).toBe(true);
  });

  it('author vs author on the board: the same task changed in two tabs is 409', async () => {
    const { version, tasks } = (await api(`${P()}/task-board`)).body as { version: number; tasks: unknown[] };
    const retitled = (title: string) =>
      tasks.map((entry) => ((entry as { id: string }).id === 't3' ? { ...(entry as object), title } : entry));
    expect((await putBoard(retitled('第一章 雨夜'), version)).status).toBe(200);
    expect(await putBoard(retitled('第一章 旧案'), version)).toMatchObject({
      status: 409,
      body: { conflicts: ['task:t3'] },
    });
  });

  it('the agent writes on the rev its run started from: an author change meanwhile is never overwritten', async () => {
    const before = (await api(`${P()}/task-board`)).body as { version: number; tasks: unknown[] };
    const run = agentUpdates(
      {
        task_board: [
          task('t1', '人物小传', 'todo'),
          task('t2', '大纲', 'blocked'),
          task('t3', '第一章 雨夜'),
        ],
      },
      'board',
    );
    await stack.fakeLlm.gateReached('board');
    // While the agent works, the author moves t1 too, to another status.
    const board = before.tasks.map((entry) =>
      (entry as { id: string }).id === 't1' ? { ...(entry as object), status: 'blocked' } : entry,
    );
    expect((await putBoard(board, before.version)).status).toBe(200);
    stack.fakeLlm.releaseGate('board');
    const result = toolResult(await run);
    expect(result).toMatchObject({ status: 'error', error_type: 'state_conflict' });
    const after = (await api(`${P()}/task-board`)).body as { tasks: Array<{ id: string; status: string }> };
    expect(after.tasks.find((entry) => entry.id === 't1')?.status).toBe('blocked');
  });
});

describe('the commit log', () => {
  it('lists every commit of info and the task board with its source and whether it merged', async () => {
    const info = (await api(`${P()}/commits?key=info`)).body.commits as Array<Record<string, unknown>>;
    const sources = info.map((entry) => [entry.rev, String(entry.source).split(':')[0], entry.merged]);
    expect(sources.slice(-4).reverse()).toEqual([
      [0, 'baseline', false],
      [1, 'author', false],
      [2, 'agent', false],
      [3, 'author', true],
    ]);
    expect(String(info.find((entry) => entry.rev === 2)?.source)).toMatch(/^agent:writer:[0-9a-f-]{36}$/);
    const all = (await api(`${P()}/commits`)).body.commits as Array<{ key: string }>;
    expect(new Set(all.map((entry) => entry.key))).toEqual(new Set(['info', 'task_board']));
    const board = (await api(`${P()}/commits?key=task_board`)).body.commits as Array<Record<string, unknown>>;
    expect(board.filter((entry) => entry.merged).map((entry) => entry.rev)).toContain(3);
    expect(board.some((entry) => String(entry.source).startsWith('agent:'))).toBe(true);
  });
});
