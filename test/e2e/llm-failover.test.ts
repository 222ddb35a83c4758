import { isTerminalFrame, type SseFrame } from '@quill/contracts';
import { type FakeLlm, SUGGESTIONS, startFakeLlm } from '@quill/fake-llm';
import { CONTINUATION_PROMPT } from '@quill/llm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, getJson, postJson } from '../support/api.ts';
import { frameTypes, readStream, startRun } from '../support/sse-client.ts';
import { type Stack, startStack } from '../support/stack.ts';

// Issue 7: the whole stack with two model providers, the stack's fake LLM as the primary and a
// second fake as the backup, every service a separate process.
let stack: Stack;
let backup: FakeLlm;

beforeAll(async () => {
  backup = await startFakeLlm({ port: 0, model: 'quill-fake-backup' });
  stack = await startStack({
    env: {
      LLM_BACKUP_BASE_URL: backup.url,
      LLM_BACKUP_API_KEY: 'backup-key',
      LLM_BACKUP_MODEL: 'quill-fake-backup',
    },
  });
});

afterAll(async () => {
  await stack?.stop();
  await backup?.close();
});

async function runToEnd(message: string) {
  const response = await startRun(stack.gateways[0]!, stack.apiKey, { project_id: stack.projectId, message });
  expect(response.status).toBe(200);
  const result = await readStream(response);
  const started = result.frames[0]!.frame as Extract<SseFrame, { type: 'run_started' }>;
  return { result, runId: started.run_id, sessionId: started.session_id };
}

interface UsageRow {
  attempt: number;
  provider: string;
  model: string;
  usage_source: string;
  total_tokens: number;
}

/** The writer's usage records of a run (the router's routing call has its own). */
function writerUsage(runId: string, minimum: number): Promise<UsageRow[]> {
  return eventually(async () => {
    const { rows } = await stack.pool.query<UsageRow>(
      `SELECT attempt, provider, model, usage_source, total_tokens FROM usage_records
       WHERE run_id = $1 AND role = 'writer' ORDER BY call_index, attempt`,
      [runId],
    );
    return rows.length >= minimum ? rows : undefined;
  });
}

describe('model provider failover across the stack', () => {
  it('a run succeeds on the backup when the primary answers 500 before any output', async () => {
    stack.fakeLlm.addScript({ match: { role: 'writer' }, responses: [{ error: { status: 500 } }] });

    const { result, runId } = await runToEnd('写第一章：雨夜里的旧书店');

    const types = frameTypes(result);
    expect(types.at(-1)).toBe('done');
    expect(types.at(-2)).toBe('workflow_complete');
    expect(types).not.toContain('error');
    expect(types).toContain('file_saved');
    // The primary was tried once; the backup served the call and, pinned, the rest of the session.
    expect(stack.fakeLlm.requests({ run_id: runId, role: 'writer' })).toHaveLength(1);
    expect(backup.requests({ run_id: runId, role: 'writer' }).length).toBeGreaterThanOrEqual(2);

    // One usage record per attempt: the refused primary attempt (estimated, nothing generated)
    // and every call the backup served (provider-reported).
    const rows = await writerUsage(runId, 3);
    expect(rows[0]).toMatchObject({
      attempt: 0,
      provider: 'primary',
      usage_source: 'estimate',
      total_tokens: 0,
    });
    expect(rows[1]).toMatchObject({ attempt: 1, provider: 'backup', model: 'quill-fake-backup' });
    expect(rows.slice(1).every((row) => row.provider === 'backup' && row.usage_source === 'provider')).toBe(
      true,
    );

    const health = await getJson(stack.gateways[0]!, '/health', undefined);
    expect(health.body.llm_breakers).toMatchObject({
      primary: { state: 'closed', failures: 1 },
      backup: { state: 'closed', failures: 0 },
    });
  });

  it('a run ends with one error frame when the primary disconnects mid-stream after text', async () => {
    stack.fakeLlm.addScript({
      match: { role: 'writer' },
      responses: [
        { text: '好的，我先构思这一章的开头，雨夜、旧书店、铃铛……'.repeat(4), disconnect_after_chars: 20 },
      ],
    });

    const { result, runId } = await runToEnd('写第二章');

    const types = frameTypes(result);
    expect(types).toContain('text');
    expect(types.indexOf('text')).toBeLessThan(types.indexOf('error'));
    const terminals = result.frames.filter((received) => isTerminalFrame(received.frame));
    expect(terminals).toHaveLength(1);
    expect(terminals[0]!.frame).toMatchObject({ type: 'error', code: 'model_error' });
    expect(types.at(-1)).toBe('done');
    // Output had started: no switch to the backup.
    expect(backup.requests({ run_id: runId, role: 'writer' })).toHaveLength(0);
    const rows = await writerUsage(runId, 1);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ provider: 'primary', usage_source: 'estimate' });
    expect(rows[0]!.total_tokens).toBeGreaterThan(0);
  });
});

describe('output truncation', () => {
  it('continues a reply cut at the length limit inside a <file> body and saves the chapter once, whole', async () => {
    const firstHalf = '雨下得很大，林晚推开旧书店的门。'.repeat(6);
    const secondHalf = '她在最里面的书架上找到了那本日记。'.repeat(6);
    stack.fakeLlm.addScript({
      match: { role: 'writer' },
      responses: [
        {
          text: '好的。',
          tool_calls: [{ name: 'create_file', arguments: { title: '第九章', file_type: 'draft' } }],
        },
        { text: `<file>\n${firstHalf}`, finish_reason: 'length' },
        { text: `${secondHalf}\n</file>\n第九章写完了。` },
      ],
    });

    const { result, runId } = await runToEnd('写第九章');

    const types = frameTypes(result);
    expect(types.at(-2)).toBe('workflow_complete');
    expect(types.filter((type) => type === 'file_start')).toHaveLength(1);
    const saved = result.frames.filter((received) => received.frame.type === 'file_saved');
    expect(saved).toHaveLength(1);
    const fileId = (saved[0]!.frame as Extract<SseFrame, { type: 'file_saved' }>).file_id;
    const { rows } = await stack.pool.query<{ content: string }>(
      'SELECT content FROM file_versions WHERE file_id = $1',
      [fileId],
    );
    expect(rows).toEqual([{ content: firstHalf + secondHalf }]);
    // The continuation call saw the partial reply and the request to go on from where it stopped.
    const continuation = stack.fakeLlm.requests({ run_id: runId, role: 'writer' })[2]!.body as {
      messages: Array<{ role: string; content: string }>;
    };
    expect(continuation.messages.at(-2)).toMatchObject({
      role: 'assistant',
      content: `<file>\n${firstHalf}`,
    });
    expect(continuation.messages.at(-1)!.content).toBe(CONTINUATION_PROMPT);
  });
});

describe('POST /agent/suggest', () => {
  const suggest = (body: unknown) => postJson(stack.gateways[0]!, '/agent/suggest', stack.apiKey, body);

  it('returns next-step suggestions through the failover client, for the project or a session', async () => {
    const forProject = await suggest({ project_id: stack.projectId });
    expect(forProject.status).toBe(200);
    expect(forProject.body).toEqual({ suggestions: [...SUGGESTIONS] });

    const { sessionId } = await runToEnd('写一个开头');
    stack.fakeLlm.addScript({ match: { role: 'suggest' }, responses: [{ error: { status: 503 } }] });
    const forSession = await suggest({ project_id: stack.projectId, session_id: sessionId });
    expect(forSession.status).toBe(200);
    expect(forSession.body.suggestions).toEqual([...SUGGESTIONS]);
    const [served] = backup.requests({ role: 'suggest' });
    const prompt = JSON.stringify((served!.body as { messages: unknown }).messages);
    expect(prompt).toContain('写一个开头');

    // Its usage joins the ledger like a run's: the failed primary attempt and the backup's.
    const rows = await eventually(async () => {
      const { rows: found } = await stack.pool.query<{ provider: string }>(
        `SELECT provider FROM usage_records WHERE user_id = $1 AND role = 'suggest'`,
        [stack.userId],
      );
      return found.length >= 3 ? found : undefined;
    });
    expect(rows.map((row) => row.provider).sort()).toEqual(['backup', 'primary', 'primary']);
  });

  it('answers 400 naming bad fields, 401 without a key, 404 for a project or session the caller cannot see', async () => {
    const malformed = await suggest({ project_id: 'nope', extra: 1 });
    expect(malformed.status).toBe(400);
    expect(malformed.body.error.code).toBe('invalid_request');
    expect(Object.keys(malformed.body.error.fields)).toContain('project_id');

    const anonymous = await postJson(stack.gateways[0]!, '/agent/suggest', undefined, {
      project_id: stack.projectId,
    });
    expect(anonymous.status).toBe(401);
    const unknownProject = await suggest({ project_id: '00000000-0000-4000-8000-000000000000' });
    expect(unknownProject.status).toBe(404);
    const unknownSession = await suggest({
      project_id: stack.projectId,
      session_id: '00000000-0000-4000-8000-000000000000',
    });
    expect(unknownSession.status).toBe(404);
  });

  it('answers 402 cost_cap_reached once the user is over the daily token cap', async () => {
    await stack.pool.query(
      `INSERT INTO quota_accounts (user_id, credits, daily_token_cap) VALUES ($1, 100, 1)
       ON CONFLICT (user_id) DO UPDATE SET daily_token_cap = 1`,
      [stack.userId],
    );
    const capped = await suggest({ project_id: stack.projectId });
    expect(capped.status).toBe(402);
    expect(capped.body.error.code).toBe('cost_cap_reached');
  });
});
