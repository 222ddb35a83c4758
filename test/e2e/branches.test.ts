import { getFile, listFiles } from '@quill/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getJson, postJson } from '../support/api.ts';
import { frameTypes, readStream, startRun } from '../support/sse-client.ts';
import { type Stack, startStack } from '../support/stack.ts';

/**
 * Regenerate and branches end to end (README "Snapshots, undo and branches"): a regenerated reply
 * lives on its own branch next to the old one, a branch's runs compile their context from that
 * branch's history only, and switching branch brings the files of that branch back.
 */
let stack: Stack;

beforeAll(async () => {
  stack = await startStack();
});
afterAll(async () => {
  await stack?.stop();
});

const post = (path: string, body: unknown = {}) => postJson(stack.gateways[0]!, path, stack.apiKey, body);
const get = (path: string) => getJson(stack.gateways[0]!, path, stack.apiKey);

async function run(message: string, sessionId?: string): Promise<{ runId: string; sessionId: string }> {
  const response = await startRun(stack.gateways[0]!, stack.apiKey, {
    project_id: stack.projectId,
    message,
    ...(sessionId ? { session_id: sessionId } : {}),
  });
  const result = await readStream(response);
  expect(frameTypes(result).at(-1)).toBe('done');
  const started = result.frames[0]!.frame;
  if (started.type !== 'run_started') throw new Error('first frame must be run_started');
  return { runId: started.run_id, sessionId: started.session_id };
}

/** Follows a run started elsewhere (a regenerate) to its `done`. */
async function follow(runId: string): Promise<string[]> {
  const response = await fetch(`${stack.gateways[0]}/api/v1/agent/runs/${runId}/stream`, {
    headers: { authorization: `Bearer ${stack.apiKey}` },
  });
  return frameTypes(await readStream(response));
}

function scriptChapter(title: string, body: string, reply: string) {
  return stack.fakeLlm.addScript({
    match: { role: 'writer' },
    responses: [
      { text: '', tool_calls: [{ name: 'create_file', arguments: { title, file_type: 'draft' } }] },
      { text: `<file>\n${body}\n</file>\n${reply}` },
    ],
  });
}

const messages = async (sessionId: string) =>
  (await get(`/sessions/${sessionId}/messages?limit=100`)).body.messages as Array<{
    id: string;
    role: string;
    content: string;
    run_id: string | null;
  }>;
const liveByTitle = async (title: string) =>
  (await listFiles(stack.pool, stack.projectId)).filter((file) => file.title === title);

describe('regenerate and branches', () => {
  it('regenerates the last reply on a new branch, keeps the old one, and files follow the branch', async () => {
    await scriptChapter('第一章-regen', '第一版的雨夜。', '第一版写好了。');
    const first = await run('写第一章-regen');
    const [firstFile] = await liveByTitle('第一章-regen');
    expect(firstFile?.content).toBe('第一版的雨夜。');

    await scriptChapter('第一章-regen', '第二版的雨夜。', '第二版写好了。');
    const regenerated = await post(`/sessions/${first.sessionId}/regenerate`);
    expect(regenerated.status).toBe(201);
    const { run_id: secondRunId, branch, previous_branch_id: oldBranchId } = regenerated.body;
    expect(branch).toMatchObject({ active: true, first_message: '写第一章-regen' });
    expect((await follow(secondRunId)).at(-1)).toBe('done');

    // The new branch's history: the prompt again and the new reply, not the first reply.
    const onNew = await messages(first.sessionId);
    expect(onNew.map((message) => message.run_id)).toEqual([secondRunId, secondRunId]);
    expect(onNew.map((message) => message.content).join('\n')).toContain('第二版写好了。');
    // The first run's file went back (it created it); the new run wrote its own.
    expect(await getFile(stack.pool, stack.projectId, firstFile!.id)).toBeNull();
    const [secondFile] = await liveByTitle('第一章-regen');
    expect(secondFile).toMatchObject({ content: '第二版的雨夜。' });
    expect(secondFile!.id).not.toBe(firstFile!.id);

    // Both alternatives are listed; switching to the old one brings its reply and its files back.
    const listed = await get(`/sessions/${first.sessionId}/branches`);
    expect(listed.body.branches).toHaveLength(2);
    expect(listed.body.branches.find((entry: { active: boolean }) => entry.active).id).toBe(branch.id);
    const back = await post(`/sessions/${first.sessionId}/branches/${oldBranchId}/activate`);
    expect(back.status).toBe(200);
    expect(back.body.branch).toMatchObject({ id: oldBranchId, active: true });
    expect((await messages(first.sessionId)).map((message) => message.run_id)).toEqual([
      first.runId,
      first.runId,
    ]);
    expect(await getFile(stack.pool, stack.projectId, firstFile!.id)).toMatchObject({
      content: '第一版的雨夜。',
    });
    expect(await getFile(stack.pool, stack.projectId, secondFile!.id)).toBeNull();

    const forward = await post(`/sessions/${first.sessionId}/branches/${branch.id}/activate`);
    expect(forward.status).toBe(200);
    expect(await getFile(stack.pool, stack.projectId, secondFile!.id)).toMatchObject({
      content: '第二版的雨夜。',
    });
    expect(await getFile(stack.pool, stack.projectId, firstFile!.id)).toBeNull();
  });

  it("a branch's run compiles its context from that branch's history only", async () => {
    const first = await run('第一轮：雨夜的旧书店');
    await run('第二轮：屋顶上的老猫', first.sessionId);
    const afterFirst = (await messages(first.sessionId))
      .filter((message) => message.run_id === first.runId)
      .at(-1)!;
    const forked = await post(`/sessions/${first.sessionId}/branches`, { after_message_id: afterFirst.id });
    expect(forked.status).toBe(201);
    expect((await messages(first.sessionId)).map((message) => message.content).join('\n')).not.toContain(
      '第二轮',
    );

    const third = await run('第三轮：海边的灯塔', first.sessionId);
    const sent = JSON.stringify(
      stack.fakeLlm.requests({ run_id: third.runId, role: 'writer' }).map((r) => r.body),
    );
    expect(sent).toContain('第一轮：雨夜的旧书店');
    expect(sent).toContain('第三轮：海边的灯塔');
    expect(sent).not.toContain('第二轮：屋顶上的老猫');
    const trace = await get(`/agent/runs/${third.runId}/context-trace`);
    expect(trace.status).toBe(200);
    expect(JSON.stringify(trace.body)).not.toContain('第二轮');

    // The other branch still sees its own turn (and not the new branch's).
    const root = (await get(`/sessions/${first.sessionId}/branches`)).body.branches.find(
      (entry: { parent_id: string | null }) => entry.parent_id === null,
    );
    expect((await post(`/sessions/${first.sessionId}/branches/${root.id}/activate`)).status).toBe(200);
    const fourth = await run('第四轮：接着写', first.sessionId);
    const sentOnRoot = JSON.stringify(
      stack.fakeLlm.requests({ run_id: fourth.runId, role: 'writer' }).map((r) => r.body),
    );
    expect(sentOnRoot).toContain('第二轮：屋顶上的老猫');
    expect(sentOnRoot).not.toContain('第三轮：海边的灯塔');
  });

  it('refuses a fork after a message that is not on the active branch, and another author’s session', async () => {
    const first = await run('第一轮：分支校验');
    const unknown = await post(`/sessions/${first.sessionId}/branches`, {
      after_message_id: '00000000-0000-4000-8000-000000000000',
    });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.fields.after_message_id).toBeDefined();
    const other = await postJson(
      stack.gateways[0]!,
      '/sessions/00000000-0000-4000-8000-000000000000/regenerate',
      stack.apiKey,
      {},
    );
    expect(other.status).toBe(404);
  });
});
