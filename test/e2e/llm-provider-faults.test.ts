import type { SseFrame } from '@quill/contracts';
import { type FakeLlm, startFakeLlm } from '@quill/fake-llm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, getJson } from '../support/api.ts';
import { frameTypes, readStream, startRun } from '../support/sse-client.ts';
import { type Stack, startStack } from '../support/stack.ts';

// The whole stack with a primary that fails the way hosted providers do (a dead key, a reset
// during reasoning) and a backup configured like a third-party provider: no internal headers,
// the newer OpenAI request fields.
let stack: Stack;
let backup: FakeLlm;

beforeAll(async () => {
  backup = await startFakeLlm({ port: 0, model: 'quill-fake-backup' });
  stack = await startStack({
    env: {
      LLM_BACKUP_BASE_URL: backup.url,
      LLM_BACKUP_API_KEY: 'backup-key',
      LLM_BACKUP_MODEL: 'quill-fake-backup',
      LLM_BACKUP_QUILL_HEADERS: 'false',
      LLM_BACKUP_OUTPUT_TOKENS_FIELD: 'max_completion_tokens',
      LLM_BACKUP_USER_FIELD: 'safety_identifier',
      LLM_BACKUP_PROMPT_CACHE_KEY: 'true',
      LLM_MAX_OUTPUT_TOKENS: '6000',
      LLM_ROLE_MAX_OUTPUT_TOKENS: 'router=256',
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
}

function writerUsage(runId: string, minimum: number): Promise<UsageRow[]> {
  return eventually(async () => {
    const { rows } = await stack.pool.query<UsageRow>(
      `SELECT attempt, provider, model FROM usage_records
       WHERE run_id = $1 AND role = 'writer' ORDER BY call_index, attempt`,
      [runId],
    );
    return rows.length >= minimum ? rows : undefined;
  });
}

describe('provider faults across the stack', () => {
  it('a dead primary key (401) fails over to the backup, counts against the primary, and the backup gets no internal headers', async () => {
    stack.fakeLlm.addScript({ match: { role: 'writer' }, responses: [{ error: { status: 401 } }] });
    const backupBefore = backup.requests().length;

    const { result, runId } = await runToEnd('写一段开头');

    const types = frameTypes(result);
    expect(types.at(-1)).toBe('done');
    expect(types).not.toContain('error');
    expect(stack.fakeLlm.requests({ run_id: runId, role: 'writer' })).toHaveLength(1);
    const served = backup.requests().slice(backupBefore);
    expect(served.length).toBeGreaterThanOrEqual(1);
    for (const request of served) {
      expect(Object.keys(request.headers).filter((name) => name.startsWith('x-quill'))).toEqual([]);
      const body = request.body as Record<string, unknown>;
      expect(body.max_completion_tokens).toBe(6000);
      expect(body.max_tokens).toBeUndefined();
      expect(body.safety_identifier).toMatch(/^quill-[0-9a-f]{32}$/);
      expect(body.prompt_cache_key).toMatch(/^quill-[0-9a-f]{32}$/);
      expect(JSON.stringify(body)).not.toContain(runId);
    }
    // The primary (loopback, auto) did get them, with the router's own cap in max_tokens.
    const [routed] = stack.fakeLlm.requests({ run_id: runId, role: 'router' });
    expect((routed!.body as { max_tokens?: number }).max_tokens).toBe(256);

    // Both usage rows name the configured model of their provider.
    const rows = await writerUsage(runId, 2);
    expect(rows[0]).toMatchObject({ attempt: 0, provider: 'primary', model: 'quill-fake-1' });
    expect(rows[1]).toMatchObject({ attempt: 1, provider: 'backup', model: 'quill-fake-backup' });

    const health = await getJson(stack.gateways[0]!, '/health', undefined);
    expect(health.body.llm_breakers.primary.failures).toBeGreaterThanOrEqual(1);
  });

  it('a reset during reasoning is no output yet: the backup answers and the run ends without an error', async () => {
    const reasoning = '先想清楚这一段要写什么：雨夜，旧书店，铜铃响了三下。'.repeat(20);
    stack.fakeLlm.addScript({
      match: { role: 'writer' },
      responses: [{ reasoning, disconnect_after_reasoning_chars: 300, disconnect_how: 'reset' }],
    });
    // The backup cannot tell runs apart (no headers): its next request is this run's.
    backup.addScript({ responses: [{ reasoning: '换个角度想。', text: '好的，我们从雨声写起。' }] });

    const { result } = await runToEnd('再写一段');

    const types = frameTypes(result);
    expect(types.at(-1)).toBe('done');
    expect(types).not.toContain('error');
    const thinking = result.frames
      .map((received) => received.frame)
      .filter((frame): frame is Extract<SseFrame, { type: 'thinking' }> => frame.type === 'thinking');
    const seen = thinking.map((frame) => frame.content).join('');
    expect(seen.startsWith(reasoning.slice(0, 300))).toBe(true);
    expect(seen.endsWith('换个角度想。')).toBe(true);
    // Coalesced like text: 300 one-character deltas became far fewer frames.
    expect(thinking.length).toBeLessThan(150);
    const text = result.frames
      .map((received) => received.frame)
      .flatMap((frame) => (frame.type === 'text' ? [frame.content] : []))
      .join('');
    expect(text).toContain('好的，我们从雨声写起。');
  });
});
