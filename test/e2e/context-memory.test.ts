import { listFiles } from '@quill/db';
import { createApiKey, createFile, createUser } from '@quill/db/gateway';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildZip, SKILL_MD } from '../../services/gateway/test/zip-builder.ts';
import { getJson } from '../support/api.ts';
import { frameTypes, readStream, startRun } from '../support/sse-client.ts';
import { type Stack, startStack } from '../support/stack.ts';

let stack: Stack;

beforeAll(async () => {
  stack = await startStack();
});

afterAll(async () => {
  await stack?.stop();
});

interface RecordedBody {
  messages: Array<{ role: string; content: string | null }>;
}

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

function upload(path: string, body: Buffer, apiKey = stack.apiKey): Promise<Response> {
  return fetch(`${stack.gateways[0]}/api/v1${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/zip' },
    body,
  });
}

describe('context across turns, through every service', () => {
  it('stores breadcrumbs with the reply and brings the chapter back as history breadcrumbs and working set', async () => {
    const first = await run('写第一章：雨夜里的旧书店');
    const chapter = (await listFiles(stack.pool, stack.projectId)).find((file) => file.fileType === 'draft')!;
    const stored = await stack.pool.query(
      'SELECT breadcrumbs FROM messages WHERE run_id = $1 AND role = $2',
      [first.runId, 'assistant'],
    );
    expect(stored.rows[0]?.breadcrumbs).toMatchObject({
      v: 1,
      created: [{ file_id: chapter.id, title: chapter.title }],
    });

    const second = await run('继续写第二章', first.sessionId);
    const request = stack.fakeLlm.requests({ run_id: second.runId, role: 'writer' })[0]!;
    const messages = (request.body as RecordedBody).messages;
    const reply = messages.find((message) => message.role === 'assistant')!;
    expect(reply.content).toContain(`[此前的工具操作]\n- 创建：${chapter.title} (id=${chapter.id})`);
    // Turn context, working set, the author's words; then the role directive as the last message.
    const turn = messages.at(-2)!.content!;
    expect(turn.startsWith('<turn_context>')).toBe(true);
    expect(turn).toContain(`<working_set>`);
    expect(turn).toContain(`${chapter.title} (id=${chapter.id}) [全文]\n${chapter.content}`);
    expect(turn.endsWith('继续写第二章')).toBe(true);
    expect(messages.at(-1)!.content).toContain('[本次运行的系统指令]');
  });

  it('serves the Context Trace of a run to the project owner only', async () => {
    const { runId } = await run('写一个开篇钩子');
    const owner = await getJson(stack.gateways[0]!, `/agent/runs/${runId}/context-trace`, stack.apiKey);
    expect(owner.status).toBe(200);
    expect(owner.body.run_id).toBe(runId);
    const trace = owner.body.traces[0].trace;
    expect(owner.body.traces[0]).toMatchObject({ role: 'writer', step: 0 });
    expect(trace.budgets).toMatchObject({ context_tokens: 32_000, history_tokens: 32_000 });
    expect(trace.usage.prompt_tokens).toBeGreaterThan(0);
    expect(Array.isArray(trace.loaded) && Array.isArray(trace.excluded)).toBe(true);

    const stranger = await createUser(stack.pool, {
      email: `stranger-${runId}@quill.test`,
      displayName: 's',
    });
    const strangerKey = (await createApiKey(stack.pool, stranger.id, 'test')).key;
    const denied = await getJson(stack.gateways[0]!, `/agent/runs/${runId}/context-trace`, strangerKey);
    expect(denied.status).toBe(404);
    expect(denied.body).toMatchObject({ error: { code: 'not_found' } });
    const unknown = await getJson(
      stack.gateways[0]!,
      '/agent/runs/00000000-0000-4000-8000-000000000000/context-trace',
      stack.apiKey,
    );
    expect(unknown.status).toBe(404);
  });

  it('hides a role-private file from the writer once the author sets its visibility; the trace shows it withheld', async () => {
    const secret = await createFile(stack.pool, {
      projectId: stack.projectId,
      title: '凶手的秘密',
      fileType: 'note',
      content: '凶手是钟表匠。',
    });
    const put = (visibility: unknown) =>
      fetch(`${stack.gateways[0]}/api/v1/projects/${stack.projectId}/files/${secret.id}/visibility`, {
        method: 'PUT',
        headers: { authorization: `Bearer ${stack.apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ visibility }),
      });
    const invalid = await put('everyone_but_me');
    expect(invalid.status).toBe(400);
    expect(await invalid.json()).toMatchObject({
      error: { code: 'invalid_request', fields: { visibility: [expect.any(String)] } },
    });
    expect((await put('private_to:planner')).status).toBe(200);

    const { runId } = await run('参考《凶手的秘密》写钟表匠出场');
    const body = JSON.stringify(
      stack.fakeLlm.requests({ run_id: runId, role: 'writer' }).map((request) => request.body),
    );
    expect(body).not.toContain(secret.id);
    expect(body).not.toContain(secret.content);
    const traces = await getJson(stack.gateways[0]!, `/agent/runs/${runId}/context-trace`, stack.apiKey);
    expect(traces.body.traces[0].trace.excluded).toContainEqual(
      expect.objectContaining({ file_id: secret.id, reason: 'visibility', detail: 'private_to:planner' }),
    );
  });

  it('imports a skill zip over HTTP, lists it in the system prompt catalog, exports it, and refuses a malicious zip', async () => {
    const imported = await upload('/skills/import', buildZip([{ name: 'hooks/SKILL.md', data: SKILL_MD }]));
    expect(imported.status).toBe(201);
    expect(await imported.json()).toMatchObject({ skill: { name: 'suspense-hooks', enabled: true } });

    const evil = await upload(
      '/skills/import',
      buildZip([
        { name: 'SKILL.md', data: SKILL_MD },
        { name: '../../.ssh/authorized_keys', data: 'ssh-rsa AAAA' },
      ]),
    );
    expect(evil.status).toBe(400);
    const refusal = (await evil.json()) as { error: { code: string; fields: { zip: string[] } } };
    expect(refusal.error.code).toBe('invalid_request');
    expect(refusal.error.fields.zip[0]).toMatch(/^path_traversal: /);

    const listed = await getJson(stack.gateways[0]!, '/skills', stack.apiKey);
    expect(listed.body.skills.map((skill: { name: string }) => skill.name)).toEqual(['suspense-hooks']);
    const exported = await fetch(`${stack.gateways[0]}/api/v1/skills/suspense-hooks/export`, {
      headers: { authorization: `Bearer ${stack.apiKey}` },
    });
    expect(exported.headers.get('content-type')).toBe('application/zip');
    const reimported = await upload('/skills/import', Buffer.from(await exported.arrayBuffer()));
    expect(reimported.status).toBe(201);

    const { runId } = await run('写一段开头');
    const request = stack.fakeLlm.requests({ run_id: runId, role: 'writer' })[0]!;
    const system = (request.body as RecordedBody).messages[0]!.content!;
    expect(system).toContain('- suspense-hooks：为章节结尾设计悬念钩子');

    const disabled = await fetch(`${stack.gateways[0]}/api/v1/skills/suspense-hooks`, {
      method: 'PATCH',
      headers: { authorization: `Bearer ${stack.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ enabled: false }),
    });
    expect(await disabled.json()).toMatchObject({ skill: { enabled: false } });
    const removed = await fetch(`${stack.gateways[0]}/api/v1/skills/suspense-hooks`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${stack.apiKey}` },
    });
    expect(removed.status).toBe(204);
  });
});
