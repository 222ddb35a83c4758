import type { SseFrame } from '@quill/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildZip, SKILL_MD } from '../../services/gateway/test/zip-builder.ts';
import { authorApi } from '../support/background-run.ts';
import { stopProcesses } from '../support/service-process.ts';
import { readStream, startRun } from '../support/sse-client.ts';
import { type Stack, startStack } from '../support/stack.ts';

/**
 * Definitions and pinning end to end (docs/kernel.md "Definitions and pinning"): a deploy that
 * changes a role's model settings, and an author's skill edit, reach new sessions and upgraded
 * ones only; the fake model records what each call was sent.
 */
let stack: Stack;
beforeAll(async () => {
  stack = await startStack();
});
afterAll(async () => {
  await stack?.stop();
});

const api = (path: string, init: { method?: string; body?: unknown } = {}) => authorApi(stack, path, init);

async function turn(message: string, sessionId?: string): Promise<{ runId: string; sessionId: string }> {
  const response = await startRun(stack.gateways[0]!, stack.apiKey, {
    project_id: stack.projectId,
    message,
    ...(sessionId ? { session_id: sessionId } : {}),
  });
  expect(response.status).toBe(200);
  const frames: SseFrame[] = (await readStream(response)).frames.map((received) => received.frame);
  expect(frames.at(-1)?.type).toBe('done');
  return {
    runId: response.headers.get('x-quill-run-id')!,
    sessionId: response.headers.get('x-quill-session-id')!,
  };
}

interface WriterCall {
  model?: string;
  max_tokens?: number;
  tools?: Array<{ function: { name: string } }>;
  messages: Array<{ role: string; content: string | null }>;
}

/** The writer's first model call of a run, as the fake model received it. */
function writerCall(runId: string): WriterCall {
  const call = stack.fakeLlm.requests({ run_id: runId, role: 'writer' })[0];
  if (!call) throw new Error(`no writer call in run ${runId}`);
  return call.body as WriterCall;
}

const settingsOf = (call: WriterCall) => ({
  model: call.model,
  max_tokens: call.max_tokens,
  tools: (call.tools ?? []).map((tool) => tool.function.name).sort(),
});

const importSkill = async (body: string) => {
  const response = await fetch(`${stack.gateways[0]}/api/v1/skills/import`, {
    method: 'POST',
    headers: { authorization: `Bearer ${stack.apiKey}`, 'content-type': 'application/zip' },
    body: buildZip([{ name: 'hooks/SKILL.md', data: SKILL_MD.replace('每章结尾留一个未解的问题。', body) }]),
  });
  expect(response.status).toBe(201);
  return ((await response.json()) as { skill: { name: string; version: number } }).skill;
};

describe('definitions and pinning: model settings and skills', () => {
  it('a deploy that changes the writer model and output cap leaves a pinned session on its old ones', async () => {
    const pinned = await turn('随便聊聊');
    const before = settingsOf(writerCall(pinned.runId));
    expect(before.model).toBeTruthy();
    expect(before.tools).toContain('create_file');
    const versions = (await api(`/agent/runs/${pinned.runId}`)).body.definitions as Record<string, number>;

    // The deploy: a writer with another model and output cap for the role starts, the old one stops.
    const old = stack.services.filter((service) => service.name === 'writer');
    await stack.startService('writer', {
      LLM_ROLE_MODEL_OVERRIDES: 'writer=quill-fake-deployed',
      LLM_ROLE_MAX_OUTPUT_TOKENS: 'writer=1234',
    });
    await stopProcesses(old.map((service) => service.child));

    const sameSession = await turn('再聊聊', pinned.sessionId);
    expect(settingsOf(writerCall(sameSession.runId))).toEqual(before);
    expect((await api(`/agent/runs/${sameSession.runId}`)).body.definitions).toMatchObject({
      writer: versions.writer,
    });

    const fresh = await turn('新会话聊聊');
    expect(settingsOf(writerCall(fresh.runId))).toEqual({
      ...before,
      model: 'quill-fake-deployed',
      max_tokens: 1234,
    });
    expect((await api(`/agent/runs/${fresh.runId}`)).body.definitions).toMatchObject({
      writer: versions.writer! + 1,
    });

    const upgraded = await api(`/sessions/${pinned.sessionId}/definitions/upgrade`, { method: 'POST' });
    expect(upgraded.body).toMatchObject({ pinned: { writer: versions.writer! + 1 } });
    const afterUpgrade = await turn('升级后再聊', pinned.sessionId);
    expect(settingsOf(writerCall(afterUpgrade.runId))).toMatchObject({
      model: 'quill-fake-deployed',
      max_tokens: 1234,
    });
    // A writer restarts mid-test and four runs go by: a loaded box needs more than the default.
  }, 300_000);

  it('a skill edit leaves a pinned session compiling the old text; a new session and an upgrade get the new one', async () => {
    const oldText = '旧方法：每章结尾留一个未解的问题。';
    const newText = '新方法：每章结尾让主角做一个错误的决定。';
    expect(await importSkill(oldText)).toMatchObject({ name: 'suspense-hooks', version: 1 });
    // The same package again is the same version.
    expect(await importSkill(oldText)).toMatchObject({ version: 1 });

    const pinned = await turn('/suspense-hooks 写个结尾');
    expect(JSON.stringify(writerCall(pinned.runId).messages)).toContain(oldText);

    // The author edits the skill.
    expect(await importSkill(newText)).toMatchObject({ version: 2 });

    const sameSession = await turn('/suspense-hooks 再写一个', pinned.sessionId);
    const sameContext = JSON.stringify(writerCall(sameSession.runId).messages);
    expect(sameContext).toContain(oldText);
    expect(sameContext).not.toContain(newText);
    expect((await api(`/agent/runs/${sameSession.runId}`)).body).toMatchObject({
      skills: { 'suspense-hooks': 1 },
    });

    const fresh = await turn('/suspense-hooks 新会话写结尾');
    const freshContext = JSON.stringify(writerCall(fresh.runId).messages);
    expect(freshContext).toContain(newText);
    expect(freshContext).not.toContain(oldText);
    const freshRun = await api(`/agent/runs/${fresh.runId}`);
    expect(freshRun.body).toMatchObject({
      skills: { 'suspense-hooks': 2 },
      definitions: { writer: expect.any(Number) },
    });

    const view = await api(`/sessions/${pinned.sessionId}/definitions`);
    expect(view.body).toMatchObject({
      skills: { pinned: { 'suspense-hooks': 1 }, current: { 'suspense-hooks': 2 } },
    });
    const upgraded = await api(`/sessions/${pinned.sessionId}/definitions/upgrade`, { method: 'POST' });
    expect(upgraded.body).toMatchObject({ skills: { pinned: { 'suspense-hooks': 2 } } });
    const afterUpgrade = await turn('/suspense-hooks 升级后写结尾', pinned.sessionId);
    expect(JSON.stringify(writerCall(afterUpgrade.runId).messages)).toContain(newText);
    expect((await api(`/agent/runs/${afterUpgrade.runId}`)).body).toMatchObject({
      skills: { 'suspense-hooks': 2 },
    });
    // Five runs: as above.
  }, 300_000);
});
