import { randomUUID } from 'node:crypto';
import {
  type Bus,
  type ConsumerHandle,
  connectBus,
  consumeDurable,
  ensureStreams,
  ensureUsageConsumer,
  nak,
  publishEnvelope,
} from '@quill/bus';
import { UsageEnvelope } from '@quill/contracts';
import { tokensUsedToday, usageTodayByModel } from '@quill/db';
import { createUser } from '@quill/db/gateway';
import { createTestDatabase, type TestDatabase } from '@quill/db/testing';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testUrls, uniqueName } from '../../../test/support/urls.ts';
import { createUsageHandler } from '../src/usage-ledger.ts';

const logger = pino({ level: 'silent' });
let bus: Bus;
let database: TestDatabase;
let consumer: ConsumerHandle | undefined;

beforeAll(async () => {
  database = await createTestDatabase();
  bus = await connectBus({ url: testUrls.nats, namespace: uniqueName('bu'), name: 'billing-usage-test' });
  await ensureStreams(bus, {
    eventsMaxAgeHours: 1,
    runAckWaitSeconds: 30,
    runMaxDeliver: 5,
    taskAckWaitSeconds: 30,
  });
});

afterAll(async () => {
  await consumer?.stop();
  if (bus) {
    const { runs, tasks, events } = bus.names.streams;
    await Promise.allSettled([runs, tasks, events].map((name) => bus.jsm.streams.delete(name)));
    await bus.close();
  }
  await database?.drop();
});

const usage = (
  runId: string,
  userId: string,
  callIndex: number,
  model: string,
  tokens: number,
): UsageEnvelope => ({
  v: 1,
  run_id: runId,
  user_id: userId,
  call_index: callIndex,
  attempt: 1,
  role: 'writer',
  provider: 'primary',
  model,
  usage: {
    prompt_tokens: tokens - 10,
    completion_tokens: 10,
    total_tokens: tokens,
    usage_source: 'provider',
  },
});

async function until(check: () => Promise<boolean>): Promise<void> {
  while (!(await check())) await new Promise((resolve) => setTimeout(resolve, 50));
}

describe('usage ledger consumer', () => {
  it('counts redelivered and re-published usage reports once', async () => {
    const user = await createUser(database.pool, {
      email: `${randomUUID()}@test.quill`,
      displayName: 'Author',
    });
    const runId = randomUUID();
    const name = await ensureUsageConsumer(bus, { ackWaitSeconds: 30 });
    const handle = createUsageHandler(database.pool, logger);
    const deliveries = new Map<number, number>();
    consumer = await consumeDurable(bus, {
      stream: bus.names.streams.events,
      consumer: name,
      schema: UsageEnvelope,
      concurrency: 4,
      logger,
      spanName: 'test usage',
      async handle(envelope, context) {
        const disposition = await handle(envelope);
        deliveries.set(envelope.call_index, (deliveries.get(envelope.call_index) ?? 0) + 1);
        // Recorded but not acknowledged the first time: JetStream delivers it again.
        return context.deliveryCount === 1 ? nak() : disposition;
      },
    });
    const reports = [usage(runId, user.id, 0, 'model-a', 100), usage(runId, user.id, 1, 'model-b', 50)];
    for (const report of reports) await publishEnvelope(bus, bus.names.usage(runId), UsageEnvelope, report);
    // A worker retry that published the same report again, past the duplicate window.
    await publishEnvelope(bus, bus.names.usage(runId), UsageEnvelope, reports[0]!);
    // A non-uuid run id can never be a ledger row: terminated, not retried forever.
    await publishEnvelope(
      bus,
      bus.names.usage('not-a-uuid'),
      UsageEnvelope,
      usage('not-a-uuid', user.id, 99, 'x', 20),
    );

    await until(
      async () =>
        (deliveries.get(0) ?? 0) >= 4 && (deliveries.get(1) ?? 0) >= 2 && (deliveries.get(99) ?? 0) >= 2,
    );
    const { rows } = await database.pool.query(
      'SELECT call_index, total_tokens FROM usage_records WHERE run_id = $1 ORDER BY call_index',
      [runId],
    );
    expect(rows).toEqual([
      { call_index: 0, total_tokens: 100 },
      { call_index: 1, total_tokens: 50 },
    ]);
    expect(await tokensUsedToday(database.pool, user.id)).toBe(150);
    expect(await usageTodayByModel(database.pool, user.id)).toEqual([
      expect.objectContaining({ provider: 'primary', model: 'model-a', calls: 1, totalTokens: 100 }),
      expect.objectContaining({ provider: 'primary', model: 'model-b', calls: 1, totalTokens: 50 }),
    ]);
  });
});
