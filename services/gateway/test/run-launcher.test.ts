import { type Bus, decodeEnvelope, type Responder, readStored } from '@quill/bus';
import {
  AgentStreamBody,
  BillingReserveReply,
  BillingReserveRequest,
  BillingSettleReply,
  BillingSettleRequest,
  EventEnvelope,
  QuillError,
  RunEndReply,
  RunEndRequest,
  RunOpenReply,
  RunOpenRequest,
  RunStartEnvelope,
} from '@quill/contracts';
import { getActiveRunForSession, getSession, type User } from '@quill/db';
import {
  addProjectMember,
  createProject,
  createSession,
  createUser,
  saveSkillPackage,
} from '@quill/db/gateway';
import { createTestDatabase, type TestDatabase } from '@quill/db/testing';
import {
  countSemaphore,
  createRedis,
  getSessionLockHolder,
  type RedisClient,
  type RedisKeys,
  redisKeys,
  releaseRunSlots,
} from '@quill/redis';
import type { FastifyBaseLogger } from 'fastify';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { standIn, testRunLauncher } from '../../../test/support/launch-stand-ins.ts';
import { closeTestBus, openTestBus } from '../../../test/support/test-bus.ts';
import { testUrls, uniqueName } from '../../../test/support/urls.ts';

/** Real Postgres, NATS and Redis; billing is a responder whose answer each case sets. */
let database: TestDatabase;
let bus: Bus;
let redis: RedisClient;
let keys: RedisKeys;
let owner: User;
let viewer: User;
let projectId: string;
let reserve: BillingReserveReply = { v: 1, ok: true, credits_left: 10 };
/** Set by a case that holds billing's answer until it lets it go. */
let reserveHeld: Promise<void> | undefined;
/** Called each time billing is asked (after the request arrived, before it answers). */
let onReserveAsked: (() => void) | undefined;
let admit: RunOpenReply = { v: 1, ok: true, phase: 'idle' };
const settles: BillingSettleRequest[] = [];
const responders: Responder[] = [];
/** The router's run admission, stood in by recorders: the run row is the router's to write. */
const opens: RunOpenRequest[] = [];
const ends: RunEndRequest[] = [];
const logger = pino({ level: 'silent' }) as unknown as FastifyBaseLogger;

beforeAll(async () => {
  database = await createTestDatabase({ serverUrl: testUrls.database });
  bus = await openTestBus('g', 'run-launcher-test');
  redis = createRedis(testUrls.redis);
  keys = redisKeys(uniqueName('quill_test_'));
  owner = await createUser(database.pool, { email: 'owner@example.com', displayName: 'Owner' });
  viewer = await createUser(database.pool, { email: 'viewer@example.com', displayName: 'Viewer' });
  projectId = (await createProject(database.pool, { ownerId: owner.id, title: '长篇' })).id;
  await addProjectMember(database.pool, projectId, viewer.id, 'viewer');
  responders.push(
    standIn(
      bus,
      bus.names.billingReserve,
      { request: BillingReserveRequest, reply: BillingReserveReply },
      async () => {
        onReserveAsked?.();
        await reserveHeld;
        return reserve;
      },
    ),
    standIn(
      bus,
      bus.names.routerRunOpen,
      { request: RunOpenRequest, reply: RunOpenReply },
      async (request) => {
        opens.push(request);
        return admit;
      },
    ),
    standIn(bus, bus.names.routerRunEnd, { request: RunEndRequest, reply: RunEndReply }, async (request) => {
      ends.push(request);
      return { v: 1 as const, ok: true as const, result: 'discarded' as const };
    }),
    standIn(
      bus,
      bus.names.billingSettle,
      { request: BillingSettleRequest, reply: BillingSettleReply },
      async (request) => {
        settles.push(request);
        return {
          v: 1 as const,
          ok: true as const,
          decision: 'refund' as const,
          reason: 'launch_failed',
          credits_refunded: 1,
          duplicate: false,
        };
      },
    ),
  );
});
afterAll(async () => {
  for (const responder of responders) await responder.stop();
  await closeTestBus(bus);
  const found = await redis.keys(`${keys.prefix}*`);
  if (found.length) await redis.del(...found);
  await redis.quit();
  await database.drop();
});

const launcher = () => testRunLauncher({ bus, pool: database.pool, redis, keys });
const body = (fields: Partial<AgentStreamBody> = {}) =>
  AgentStreamBody.parse({ project_id: projectId, message: '写第一章', ...fields });

/** What the launch writes for a run or in a session: none of it may stay after a refusal. */
async function launchRows(sessionId: string, runId?: string) {
  const { rows } = await database.pool.query<{ messages: number; snapshots: number; skills: number }>(
    `SELECT (SELECT count(*) FROM messages WHERE session_id = $1) AS messages,
       (SELECT count(*) FROM snapshots WHERE run_id = $2) AS snapshots,
       (SELECT count(*) FROM run_skill_versions WHERE run_id = $2) AS skills`,
    [sessionId, runId ?? null],
  );
  return rows[0];
}

async function sessionCount(userId: string): Promise<number> {
  const { rows } = await database.pool.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM sessions WHERE user_id = $1',
    [userId],
  );
  return rows[0]!.n;
}

async function refusal(promise: Promise<unknown>): Promise<string> {
  const error = await promise.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  if (!(error instanceof QuillError)) throw new Error(`expected a QuillError, got ${String(error)}`);
  return error.code;
}

describe('gateway run launcher', () => {
  it('starts a run: the router asked to open it, the message written, lock and slot held, run_started then runs.start', async () => {
    reserve = { v: 1, ok: true, credits_left: 10 };
    const starts: RunStartEnvelope[] = [];
    // The runs stream is a work queue (the router's): the test watches the subject instead.
    const watch = bus.connection.subscribe(bus.names.runStart('*'), {
      callback: (_error, message) => {
        starts.push(decodeEnvelope(RunStartEnvelope, message.subject, message.data));
      },
    });
    await bus.connection.flush();
    const launched = await launcher()(owner, body(), logger);
    // The server may send the publish's JetStream ack before its copy to this subscription (the
    // stream acks from its own goroutine), so the copy can come after the launch returned.
    await vi
      .waitFor(() => expect(starts).toHaveLength(1), { timeout: 10_000, interval: 20 })
      .finally(() => watch.unsubscribe());
    expect(opens.at(-1)).toMatchObject({
      run_id: launched.runId,
      session_id: launched.sessionId,
      project_id: projectId,
      user_id: owner.id,
    });
    expect(ends.some((request) => request.run_id === launched.runId)).toBe(false);
    expect(await getSessionLockHolder(redis, keys.sessionLock(launched.sessionId))).toBe(launched.runId);
    expect(await countSemaphore(redis, keys.userSemaphore(owner.id))).toBe(1);
    const frames = await readStored(bus, {
      stream: bus.names.streams.events,
      subject: bus.names.events(launched.runId),
      schema: EventEnvelope,
    });
    expect(frames.map((item) => item.envelope?.frame.type)).toEqual(['run_started']);
    expect(starts).toMatchObject([
      { run_id: launched.runId, session_id: launched.sessionId, message: '写第一章' },
    ]);
  });

  it('writes nothing and holds no database connection while billing has not answered', async () => {
    reserve = { v: 1, ok: true, credits_left: 10 };
    const { sessionId } = await createSession(database.pool, { projectId, userId: owner.id, title: 'chat' });
    let answer!: () => void;
    reserveHeld = new Promise((resolve) => {
      answer = resolve;
    });
    const asked = new Promise<void>((resolve) => {
      onReserveAsked = resolve;
    });
    try {
      const launching = launcher()(owner, body({ session_id: sessionId }), logger);
      await asked;
      // The router has admitted the run meanwhile; the launch waits for billing alone.
      await vi.waitFor(() => expect(opens.at(-1)?.session_id).toBe(sessionId), { timeout: 10_000 });
      const { pool } = database;
      expect(pool.totalCount - pool.idleCount).toBe(0);
      expect(await launchRows(sessionId, opens.at(-1)!.run_id)).toEqual({
        messages: 0,
        snapshots: 0,
        skills: 0,
      });
      answer();
      const launched = await launching;
      expect(await launchRows(sessionId, launched.runId)).toMatchObject({ messages: 1, snapshots: 1 });
      // Its slot is given back, as the run's end would: the cases below count the user's slots.
      await releaseRunSlots(
        redis,
        { sessionLock: keys.sessionLock(sessionId), userSemaphore: keys.userSemaphore(owner.id) },
        launched.runId,
      );
    } finally {
      answer();
      reserveHeld = undefined;
      onReserveAsked = undefined;
    }
  });

  it('a second run on a busy session is refused session_busy and leaves the first alone', async () => {
    reserve = { v: 1, ok: true, credits_left: 10 };
    const first = await launcher()(owner, body(), logger);
    expect(await refusal(launcher()(owner, body({ session_id: first.sessionId }), logger))).toBe(
      'session_busy',
    );
    expect(await getSessionLockHolder(redis, keys.sessionLock(first.sessionId))).toBe(first.runId);
  });

  it.each([
    ['quota_exhausted', 'quota_exhausted'],
    ['internal_error', 'service_unavailable'],
  ] as const)(
    'billing answering %s is refused %s and undone: no run, session idle, lock and slot free',
    async (code, refused) => {
      reserve = { v: 1, ok: false, code };
      const { sessionId } = await createSession(database.pool, {
        projectId,
        userId: owner.id,
        title: 'chat',
      });
      const slots = await countSemaphore(redis, keys.userSemaphore(owner.id));
      const settled = settles.length;
      expect(await refusal(launcher()(owner, body({ session_id: sessionId }), logger))).toBe(refused);
      expect(await launchRows(sessionId, opens.at(-1)?.run_id)).toEqual({
        messages: 0,
        snapshots: 0,
        skills: 0,
      });
      expect(await getActiveRunForSession(database.pool, sessionId)).toBeNull();
      expect(await getSession(database.pool, sessionId)).toMatchObject({ phase: 'idle' });
      // The run the router opened is dropped: it never started and no credit was taken.
      expect(ends.at(-1)).toMatchObject({ reason: 'launch_failed', reserved: false });
      expect(await getSessionLockHolder(redis, keys.sessionLock(sessionId))).toBeNull();
      expect(await countSemaphore(redis, keys.userSemaphore(owner.id))).toBe(slots);
      // Billing never reserved, so there is nothing to give back.
      expect(settles.length).toBe(settled);
    },
  );

  it('a run the router refuses to open is refused service_unavailable: no rows, credit given back, lock and slot free', async () => {
    reserve = { v: 1, ok: true, credits_left: 10 };
    admit = { v: 1, ok: false, code: 'internal_error' };
    await saveSkillPackage(database.pool, owner.id, {
      name: 'pacing',
      description: '节奏',
      content: '慢一点',
      metadata: {},
      resources: [],
    });
    const { sessionId } = await createSession(database.pool, { projectId, userId: owner.id, title: 'chat' });
    const slots = await countSemaphore(redis, keys.userSemaphore(owner.id));
    const settled = settles.length;
    try {
      expect(await refusal(launcher()(owner, body({ session_id: sessionId }), logger))).toBe(
        'service_unavailable',
      );
    } finally {
      admit = { v: 1, ok: true, phase: 'idle' };
    }
    const runId = opens.at(-1)!.run_id;
    expect(await launchRows(sessionId, runId)).toEqual({ messages: 0, snapshots: 0, skills: 0 });
    // Billing reserved meanwhile: the launch settles that run as a refund.
    expect(settles.slice(settled)).toMatchObject([{ run_id: runId, outcome: { terminal: 'error' } }]);
    expect(await getSessionLockHolder(redis, keys.sessionLock(sessionId))).toBeNull();
    expect(await countSemaphore(redis, keys.userSemaphore(owner.id))).toBe(slots);

    // The same session launches once the router admits: every row of the launch, in one go.
    const launched = await launcher()(owner, body({ session_id: sessionId }), logger);
    expect(await launchRows(sessionId, launched.runId)).toEqual({ messages: 1, snapshots: 1, skills: 1 });
  });

  it('a user at the run limit is refused too_many_active_runs without keeping the session lock', async () => {
    reserve = { v: 1, ok: true, credits_left: 10 };
    const held = await countSemaphore(redis, keys.userSemaphore(owner.id));
    const atLimit = testRunLauncher({ bus, pool: database.pool, redis, keys }, held);
    const { sessionId } = await createSession(database.pool, { projectId, userId: owner.id, title: 'chat' });
    expect(await refusal(atLimit(owner, body({ session_id: sessionId }), logger))).toBe(
      'too_many_active_runs',
    );
    expect(await getSessionLockHolder(redis, keys.sessionLock(sessionId))).toBeNull();
    expect(await countSemaphore(redis, keys.userSemaphore(owner.id))).toBe(held);
    expect(await launchRows(sessionId)).toMatchObject({ messages: 0 });
  });

  it('a viewer cannot start runs (forbidden); an unknown project is not_found', async () => {
    const before = await sessionCount(viewer.id);
    expect(await refusal(launcher()(viewer, body(), logger))).toBe('forbidden');
    expect(await refusal(launcher()(owner, body({ project_id: crypto.randomUUID() }), logger))).toBe(
      'not_found',
    );
    // A refused new-session launch leaves no session behind.
    expect(await sessionCount(viewer.id)).toBe(before);
    // Another user's session is not found, even in a project the caller may write to.
    const { sessionId } = await createSession(database.pool, { projectId, userId: viewer.id, title: 'v' });
    expect(await refusal(launcher()(owner, body({ session_id: sessionId }), logger))).toBe('not_found');
  });
});
