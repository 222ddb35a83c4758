import { randomUUID } from 'node:crypto';
import { type Bus, type Responder, readStored, serveRequests } from '@quill/bus';
import {
  BillingSettleReply,
  BillingSettleRequest,
  EventEnvelope,
  type RunStartEnvelope,
  type SseFrame,
} from '@quill/contracts';
import { createProject, createSession, createUser } from '@quill/db/gateway';
import { createRun, startRun } from '@quill/db/router';
import { createTestDatabase, type TestDatabase } from '@quill/db/testing';
import { createRedis, type RedisClient, type RedisKeys, redisKeys } from '@quill/redis';
import { type Logger, pino } from 'pino';
import { closeTestBus, openTestBus } from '../../../test/support/test-bus.ts';
import { testUrls, uniqueName } from '../../../test/support/urls.ts';
import { createPhaseWriter } from '../src/phases/phase-writer.ts';

/**
 * Real Postgres, NATS and Redis for the router's run path, without the services: each file gets
 * its own database, bus namespace and Redis prefix. Billing is a responder the test scripts.
 */
export interface RunRig {
  database: TestDatabase;
  bus: Bus;
  redis: RedisClient;
  keys: RedisKeys;
  logger: Logger;
  userId: string;
  projectId: string;
  settles: BillingSettleRequest[];
  close(): Promise<void>;
}

export async function openRunRig(
  name: string,
  billing: (request: BillingSettleRequest) => BillingSettleReply | Promise<BillingSettleReply>,
): Promise<RunRig> {
  const database = await createTestDatabase({ serverUrl: testUrls.database });
  const bus = await openTestBus('r', name);
  const redis = createRedis(testUrls.redis);
  const keys = redisKeys(uniqueName('quill_test_'));
  const logger: Logger = pino({ level: 'silent' });
  const userId = (await createUser(database.pool, { email: `${name}@example.com`, displayName: name })).id;
  const projectId = (await createProject(database.pool, { ownerId: userId, title: name })).id;
  const settles: BillingSettleRequest[] = [];
  const responder: Responder = serveRequests(
    bus,
    bus.names.billingSettle,
    { request: BillingSettleRequest, reply: BillingSettleReply },
    {
      handle: async (request) => {
        settles.push(request);
        return billing(request);
      },
      invalidReply: { v: 1, ok: false, code: 'invalid_bus_message' },
      failureReply: { v: 1, ok: false, code: 'internal_error' },
    },
    logger,
  );
  return {
    database,
    bus,
    redis,
    keys,
    logger,
    userId,
    projectId,
    settles,
    async close() {
      await responder.stop();
      await closeTestBus(bus);
      const found = await redis.keys(`${keys.prefix}*`);
      if (found.length) await redis.del(...found);
      await redis.quit();
      await database.drop();
    },
  };
}

/** A running run with its session, as the gateway leaves it, and its start envelope. */
export async function startedRun(rig: RunRig, message = '写第一章'): Promise<RunStartEnvelope> {
  const { sessionId } = await createSession(rig.database.pool, {
    projectId: rig.projectId,
    userId: rig.userId,
    title: 'chat',
  });
  const runId = randomUUID();
  await createRun(rig.database.pool, {
    runId,
    sessionId,
    projectId: rig.projectId,
    userId: rig.userId,
    generationMode: 'fast',
  });
  return {
    v: 1,
    run_id: runId,
    session_id: sessionId,
    project_id: rig.projectId,
    user_id: rig.userId,
    message_id: randomUUID(),
    message,
    focus_file_id: null,
    attached_file_ids: [],
    generation_mode: 'fast',
    ui_language: 'zh',
    created_at: new Date().toISOString(),
  };
}

/** The run's stored frames, in order. */
export async function framesOf(rig: RunRig, runId: string): Promise<SseFrame[]> {
  const items = await readStored(rig.bus, {
    stream: rig.bus.names.streams.events,
    subject: rig.bus.names.events(runId),
    schema: EventEnvelope,
  });
  return items.flatMap((item) => (item.envelope ? [item.envelope.frame] : []));
}

export const settled = (decision: 'charge' | 'refund', credits = 0): BillingSettleReply => ({
  v: 1,
  ok: true,
  decision,
  reason: 'test',
  credits_refunded: credits,
  duplicate: false,
});

/** A run a router has taken: `running`, as the finisher finds it (docs/architecture.md "Phases"). */
export async function takenRun(rig: RunRig, message = '写第一章'): Promise<RunStartEnvelope> {
  const start = await startedRun(rig, message);
  await startRun(rig.database.pool, start.run_id);
  return start;
}

/** What the run finisher needs, on the rig's connections (requests retried for up to 4 s). */
export function finisherDependencies(rig: RunRig) {
  return {
    bus: rig.bus,
    pool: rig.database.pool,
    redis: rig.redis,
    keys: rig.keys,
    requestTimeoutMs: 2_000,
    requestDeadlineMs: 4_000,
    phases: createPhaseWriter(rig.database.pool, rig.logger),
  };
}
