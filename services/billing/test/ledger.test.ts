import { randomUUID } from 'node:crypto';
import { getCredits } from '@quill/db';
import { ensureQuotaAccount, recordUsage } from '@quill/db/billing';
import { createUser } from '@quill/db/gateway';
import { createTestDatabase, type TestDatabase } from '@quill/db/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { grantCredits as grant } from '../src/grants.ts';
import { reserveCredit, settleRun } from '../src/ledger.ts';
import { meterRun } from '../src/run-meter.ts';

let database: TestDatabase;

beforeAll(async () => {
  database = await createTestDatabase();
});

afterAll(async () => {
  await database?.drop();
});

async function newUser(credits?: number): Promise<string> {
  const user = await createUser(database.pool, {
    email: `${randomUUID()}@test.quill`,
    displayName: 'Author',
  });
  if (credits !== undefined) await ensureQuotaAccount(database.pool, user.id, credits);
  return user.id;
}

const reserve = (userId: string, runId = randomUUID()) =>
  reserveCredit(database.pool, { runId, userId, defaultCredits: 3 });

describe('reserveCredit', () => {
  it('opens an account with the default credits and deducts one per run, once per run id', async () => {
    const userId = await newUser();
    const runId = randomUUID();
    expect(await reserve(userId, runId)).toEqual({ ok: true, creditsLeft: 2 });
    expect(await reserve(userId, runId)).toEqual({ ok: true, creditsLeft: 2 });
    expect(await getCredits(database.pool, userId)).toBe(2);
  });

  it('answers quota_exhausted at zero and never goes negative under concurrent reserves', async () => {
    const userId = await newUser(2);
    const results = await Promise.all(Array.from({ length: 6 }, () => reserve(userId)));
    expect(results.filter((result) => result.ok)).toHaveLength(2);
    expect(results.filter((result) => !result.ok)).toEqual(
      Array.from({ length: 4 }, () => ({ ok: false, code: 'quota_exhausted' })),
    );
    expect(await getCredits(database.pool, userId)).toBe(0);
    const ledger = await database.pool.query(
      `SELECT count(*)::int AS reservations FROM billing_ledger WHERE user_id = $1 AND kind = 'reserve'`,
      [userId],
    );
    expect(ledger.rows[0].reservations).toBe(2);
  });

  it('opens a new user’s account once under concurrent first reserves, each run deducted once', async () => {
    const userId = await newUser();
    const results = await Promise.all(Array.from({ length: 5 }, () => reserve(userId)));
    expect(results.filter((result) => result.ok)).toHaveLength(3);
    expect(results.filter((result) => !result.ok)).toEqual([
      { ok: false, code: 'quota_exhausted' },
      { ok: false, code: 'quota_exhausted' },
    ]);
    expect(await getCredits(database.pool, userId)).toBe(0);
    const ledger = await database.pool.query(
      `SELECT count(*)::int AS reservations FROM billing_ledger WHERE user_id = $1 AND kind = 'reserve'`,
      [userId],
    );
    expect(ledger.rows[0].reservations).toBe(3);
  });

  it('answers cost_cap_reached once today’s provider tokens reach the daily cap, without deducting', async () => {
    const userId = await newUser(10);
    await database.pool.query('UPDATE quota_accounts SET daily_token_cap = 100 WHERE user_id = $1', [userId]);
    expect(await reserve(userId)).toMatchObject({ ok: true });
    await recordUsage(database.pool, {
      v: 1,
      run_id: randomUUID(),
      user_id: userId,
      call_index: 0,
      attempt: 1,
      role: 'writer',
      provider: 'primary',
      model: 'm',
      usage: { prompt_tokens: 60, completion_tokens: 40, total_tokens: 100, usage_source: 'provider' },
    });
    expect(await reserve(userId)).toEqual({ ok: false, code: 'cost_cap_reached' });
    expect(await getCredits(database.pool, userId)).toBe(9);
  });
});

const grantCredits = (pool: typeof database.pool, input: Omit<Parameters<typeof grant>[1], 'grantId'>) =>
  grant(pool, { ...input, grantId: randomUUID() });

describe('grantCredits', () => {
  it('adds a retried grant (same grant id) once', async () => {
    const admin = await newUser();
    const user = await newUser(1);
    const input = { grantId: randomUUID(), userId: user, credits: 4, grantedBy: admin, defaultCredits: 3 };
    expect(await grant(database.pool, input)).toEqual({ ok: true, credits: 5 });
    expect(await grant(database.pool, input)).toEqual({ ok: true, credits: 5 });
    expect(await getCredits(database.pool, user)).toBe(5);
  });

  it('adds to the balance, opens a missing account with the default first, and audits the grant', async () => {
    const admin = await newUser();
    const funded = await newUser(0);
    expect(
      await grantCredits(database.pool, { userId: funded, credits: 5, grantedBy: admin, defaultCredits: 3 }),
    ).toEqual({
      ok: true,
      credits: 5,
    });
    const fresh = await newUser();
    expect(
      await grantCredits(database.pool, { userId: fresh, credits: 5, grantedBy: admin, defaultCredits: 3 }),
    ).toEqual({
      ok: true,
      credits: 8,
    });
    const audit = await database.pool.query(
      'SELECT credits, granted_by FROM credit_grants WHERE user_id = $1',
      [funded],
    );
    expect(audit.rows).toEqual([{ credits: 5, granted_by: admin }]);
  });

  it('refuses unknown users and a balance that would overflow, changing nothing', async () => {
    const admin = await newUser();
    expect(
      await grantCredits(database.pool, {
        userId: randomUUID(),
        credits: 1,
        grantedBy: admin,
        defaultCredits: 3,
      }),
    ).toEqual({ ok: false, reason: 'no_such_user' });
    const rich = await newUser(2_147_483_000);
    expect(
      await grantCredits(database.pool, { userId: rich, credits: 1000, grantedBy: admin, defaultCredits: 3 }),
    ).toEqual({ ok: false, reason: 'overflow' });
    expect(await getCredits(database.pool, rich)).toBe(2_147_483_000);
    const audit = await database.pool.query(
      'SELECT count(*)::int AS grants FROM credit_grants WHERE user_id = $1',
      [rich],
    );
    expect(audit.rows[0].grants).toBe(0);
  });
});

describe('settleRun', () => {
  it('refunds the payer once however many settle at once; every caller gets the same decision', async () => {
    const payer = await newUser(4);
    const runId = randomUUID();
    await reserve(payer, runId);
    expect(await getCredits(database.pool, payer)).toBe(3);
    // Another user id in the request: money goes back to whoever paid the reservation.
    const settle = () =>
      settleRun(database.pool, {
        runId,
        userId: randomUUID(),
        decision: 'refund',
        reason: 'model_error:no_output',
      });
    const results = await Promise.all(Array.from({ length: 8 }, settle));
    expect(results.filter((result) => !result.duplicate)).toHaveLength(1);
    for (const result of results) {
      expect(result).toMatchObject({
        decision: 'refund',
        reason: 'model_error:no_output',
        creditsRefunded: 1,
      });
    }
    // A later settle with another decision keeps the first one.
    expect(
      await settleRun(database.pool, { runId, userId: payer, decision: 'charge', reason: 'completed' }),
    ).toEqual({
      decision: 'refund',
      reason: 'model_error:no_output',
      creditsRefunded: 1,
      duplicate: true,
    });
    expect(await getCredits(database.pool, payer)).toBe(4);
    const ledger = await database.pool.query(
      'SELECT kind, user_id, credits_delta FROM billing_ledger WHERE run_id = $1 ORDER BY kind',
      [runId],
    );
    expect(ledger.rows).toEqual([
      { kind: 'refund', user_id: payer, credits_delta: 1 },
      { kind: 'reserve', user_id: payer, credits_delta: -1 },
    ]);
  });

  it('charges without moving credits, and a run with no reservation settles for nothing', async () => {
    const payer = await newUser(2);
    const runId = randomUUID();
    await reserve(payer, runId);
    expect(
      await settleRun(database.pool, { runId, userId: payer, decision: 'charge', reason: 'completed' }),
    ).toEqual({
      decision: 'charge',
      reason: 'completed',
      creditsRefunded: 0,
      duplicate: false,
    });
    expect(await getCredits(database.pool, payer)).toBe(1);

    const unreserved = randomUUID();
    const meter = meterRun({ frames: [], steps: [], usage: [] }, undefined);
    expect(
      await settleRun(database.pool, {
        runId: unreserved,
        userId: payer,
        decision: 'refund',
        reason: 'worker_lost:infrastructure',
        producedOutput: false,
        meter,
      }),
    ).toEqual({
      decision: 'refund',
      reason: 'worker_lost:infrastructure',
      creditsRefunded: 0,
      duplicate: false,
    });
    expect(await getCredits(database.pool, payer)).toBe(1);
    const settlement = await database.pool.query(
      'SELECT user_id, credits_refunded, run_meter FROM settlements WHERE run_id = $1',
      [unreserved],
    );
    expect(settlement.rows).toEqual([
      {
        user_id: payer,
        credits_refunded: 0,
        run_meter: meter,
      },
    ]);
  });
});
