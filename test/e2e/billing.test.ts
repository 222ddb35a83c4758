import { randomUUID } from 'node:crypto';
import { QuotaResponse, type SseFrame, UsageTodayResponse } from '@quill/contracts';
import { getCredits, type UserRole } from '@quill/db';
import { ensureQuotaAccount } from '@quill/db/billing';
import { createApiKey, createProject, createUser } from '@quill/db/gateway';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, getJson, postJson } from '../support/api.ts';
import { frameTypes, readStream, startRun } from '../support/sse-client.ts';
import { type Stack, startStack } from '../support/stack.ts';

// Billing end to end: refunds the client can see, 402s before a run exists, the usage ledger
// against the fake LLM's own usage reports, and the admin grant.
let stack: Stack;

beforeAll(async () => {
  stack = await startStack({ env: { GATEWAY_RATE_LIMIT_PER_MINUTE: '1000' } });
});

afterAll(async () => {
  await stack?.stop();
});

interface Author {
  userId: string;
  apiKey: string;
  projectId: string;
}

async function newAuthor(options: { credits?: number; role?: UserRole } = {}): Promise<Author> {
  const user = await createUser(stack.pool, {
    email: `${randomUUID()}@test.quill`,
    displayName: 'Author',
    role: options.role ?? 'user',
  });
  if (options.credits !== undefined) await ensureQuotaAccount(stack.pool, user.id, options.credits);
  const { key } = await createApiKey(stack.pool, user.id, 'test');
  const project = await createProject(stack.pool, { ownerId: user.id, title: '雨夜书店' });
  return { userId: user.id, apiKey: key, projectId: project.id };
}

const runIdOf = (frames: Array<{ frame: SseFrame }>) => frames[0]!.frame.run_id;

describe('billing end to end', () => {
  it('refunds a run that failed before any output: the client sees quota_refunded, then done', async () => {
    const author = await newAuthor({ credits: 3 });
    stack.fakeLlm.addScript({ match: { role: 'writer' }, responses: [{ error: { status: 400 } }] });
    const response = await startRun(stack.gateways[0]!, author.apiKey, {
      project_id: author.projectId,
      message: '写第一章',
    });
    expect(response.status).toBe(200);
    const result = await readStream(response);
    const types = frameTypes(result);
    expect(types.slice(-3)).toEqual(['error', 'quota_refunded', 'done']);
    const refunded = result.frames.at(-2)!.frame;
    expect(refunded).toMatchObject({ type: 'quota_refunded', credits: 1 });
    expect(result.frames.at(-3)!.frame).toMatchObject({ type: 'error', refundable: true });

    const runId = runIdOf(result.frames);
    expect(await getCredits(stack.pool, author.userId)).toBe(3);
    const run = await stack.pool.query('SELECT billing_decision FROM runs WHERE run_id = $1', [runId]);
    expect(run.rows[0]).toEqual({ billing_decision: 'refund' });
    const settlement = await stack.pool.query(
      'SELECT decision, reason, produced_output, credits_refunded FROM settlements WHERE run_id = $1',
      [runId],
    );
    expect(settlement.rows).toEqual([
      { decision: 'refund', reason: 'model_error:no_output', produced_output: false, credits_refunded: 1 },
    ]);
    // The one billing line per run, with its reason, output flag and run meter.
    const billing = stack.services.find((service) => service.name === 'billing')!;
    const line = billing
      .output()
      .split('\n')
      .find((text) => text.includes(runId) && text.includes('Agent stream billing evaluated'));
    expect(line, 'billing log line').toBeDefined();
    expect(JSON.parse(line!)).toMatchObject({
      run_id: runId,
      billing_reason: 'model_error:no_output',
      produced_output: false,
      run_tool_calls: 0,
      // The meter's tokens are the provider's own numbers for this run (docs/agent-behaviour.md 坑 9).
      run_total_tokens: stack.fakeLlm
        .requests({ run_id: runId })
        .reduce((sum, request) => sum + (request.usage?.total_tokens ?? 0), 0),
    });
    expect(JSON.parse(line!).run_model_calls).toEqual(expect.any(Number));
  });

  it('answers 402 quota_exhausted at zero credits and creates no run', async () => {
    const author = await newAuthor({ credits: 0 });
    const response = await startRun(stack.gateways[0]!, author.apiKey, {
      project_id: author.projectId,
      message: '写第一章',
    });
    expect(response.status).toBe(402);
    expect(await response.json()).toMatchObject({ error: { code: 'quota_exhausted' } });
    const runs = await stack.pool.query('SELECT count(*)::int AS runs FROM runs WHERE user_id = $1', [
      author.userId,
    ]);
    expect(runs.rows[0].runs).toBe(0);
    expect(await getCredits(stack.pool, author.userId)).toBe(0);
  });

  it('answers 402 cost_cap_reached once today’s tokens reach the daily cap', async () => {
    const author = await newAuthor({ credits: 5 });
    await stack.pool.query('UPDATE quota_accounts SET daily_token_cap = 10 WHERE user_id = $1', [
      author.userId,
    ]);
    await stack.pool.query(
      `INSERT INTO usage_records (run_id, user_id, call_index, attempt, role, provider, model,
         prompt_tokens, completion_tokens, total_tokens, usage_source)
       VALUES ($1, $2, 0, 1, 'writer', 'primary', 'quill-fake-1', 6, 4, 10, 'provider')`,
      [randomUUID(), author.userId],
    );
    const response = await startRun(stack.gateways[0]!, author.apiKey, {
      project_id: author.projectId,
      message: '写第一章',
    });
    expect(response.status).toBe(402);
    expect(await response.json()).toMatchObject({ error: { code: 'cost_cap_reached' } });
    expect(await getCredits(stack.pool, author.userId)).toBe(5);
    const quota = QuotaResponse.parse((await getJson(stack.gateways[0]!, '/quota', author.apiKey)).body);
    expect(quota).toEqual({ credits: 5, daily_token_cap: 10, used_today_tokens: 10 });
  });

  it('reports today’s usage equal to what the model provider reported, and charges a completed run', async () => {
    const author = await newAuthor({ credits: 4 });
    const runIds: string[] = [];
    for (const message of ['写第一章', '写第二章']) {
      const result = await readStream(
        await startRun(stack.gateways[0]!, author.apiKey, { project_id: author.projectId, message }),
      );
      expect(frameTypes(result).slice(-2)).toEqual(['workflow_complete', 'done']);
      runIds.push(runIdOf(result.frames));
    }
    const reported = runIds
      .flatMap((runId) => stack.fakeLlm.requests({ run_id: runId }))
      .map((request) => request.usage);
    expect(reported.length).toBeGreaterThan(0);
    expect(reported.every((usage) => usage !== undefined)).toBe(true);
    const expected = {
      calls: reported.length,
      estimated_calls: 0,
      prompt_tokens: reported.reduce((sum, usage) => sum + usage!.prompt_tokens, 0),
      completion_tokens: reported.reduce((sum, usage) => sum + usage!.completion_tokens, 0),
      total_tokens: reported.reduce((sum, usage) => sum + usage!.total_tokens, 0),
    };

    // The ledger consumes usage asynchronously: wait until it has caught up, then compare exactly.
    const usage = await eventually(async () => {
      const today = UsageTodayResponse.parse(
        (await getJson(stack.gateways[0]!, '/usage/today', author.apiKey)).body,
      );
      return today.total.calls >= expected.calls ? today : undefined;
    });
    expect(usage.total).toEqual(expected);
    expect(usage.by_model).toEqual([expect.objectContaining({ model: 'quill-fake-1', ...expected })]);
    expect(usage.day).toBe(new Date().toISOString().slice(0, 10));

    const quota = QuotaResponse.parse((await getJson(stack.gateways[0]!, '/quota', author.apiKey)).body);
    expect(quota).toEqual({ credits: 2, daily_token_cap: null, used_today_tokens: expected.total_tokens });
    const settlements = await stack.pool.query(
      'SELECT decision, produced_output FROM settlements WHERE run_id = ANY($1::uuid[])',
      [runIds],
    );
    expect(settlements.rows).toEqual([
      { decision: 'charge', produced_output: true },
      { decision: 'charge', produced_output: true },
    ]);
  });

  it('lets an admin grant credits and refuses everyone else with 403', async () => {
    const admin = await newAuthor({ role: 'admin' });
    const author = await newAuthor({ credits: 1 });
    const gateway = stack.gateways[0]!;

    const granted = await postJson(gateway, `/admin/users/${author.userId}/credits`, admin.apiKey, {
      credits: 5,
    });
    expect(granted.status).toBe(200);
    expect(granted.body).toEqual({ user_id: author.userId, credits: 6 });
    expect(await getCredits(stack.pool, author.userId)).toBe(6);

    const byAuthor = await postJson(gateway, `/admin/users/${author.userId}/credits`, author.apiKey, {
      credits: 5,
    });
    expect(byAuthor.status).toBe(403);
    expect(byAuthor.body).toMatchObject({ error: { code: 'forbidden' } });
    const byDemo = await postJson(gateway, `/admin/users/${admin.userId}/credits`, stack.apiKey, {
      credits: 5,
    });
    expect(byDemo.status).toBe(403);
    expect(await getCredits(stack.pool, author.userId)).toBe(6);

    for (const credits of [0, -3, 1.5, '5']) {
      const invalid = await postJson(gateway, `/admin/users/${author.userId}/credits`, admin.apiKey, {
        credits,
      });
      expect(invalid.status, String(credits)).toBe(400);
      expect(Object.keys(invalid.body.error.fields)).toEqual(['credits']);
    }
    const unknown = await postJson(gateway, `/admin/users/${randomUUID()}/credits`, admin.apiKey, {
      credits: 1,
    });
    expect(unknown.status).toBe(404);
    const badId = await postJson(gateway, '/admin/users/not-a-uuid/credits', admin.apiKey, { credits: 1 });
    expect(badId.status).toBe(400);
    expect(await getCredits(stack.pool, author.userId)).toBe(6);
  });
});
