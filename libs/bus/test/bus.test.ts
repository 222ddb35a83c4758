import { randomUUID } from 'node:crypto';
import {
  BillingBalanceReply,
  BillingBalanceRequest,
  EventEnvelope,
  frame,
  HealthReply,
  type SseFrame,
  TaskEnvelope,
} from '@quill/contracts';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { closeTestBus, openTestBus, TEST_STREAM_SETTINGS } from '../../../test/support/test-bus.ts';
import { uniqueName } from '../../../test/support/urls.ts';
import {
  ack,
  type Bus,
  BusRequestError,
  consumeDurable,
  countStored,
  ensureRoleConsumer,
  ensureStreams,
  InvalidEnvelopeError,
  publishEnvelope,
  publishFrame,
  requestReply,
  serveRequests,
  term,
} from '../src/index.ts';

const logger = pino({ level: 'silent' });
const settings = TEST_STREAM_SETTINGS;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

let bus: Bus;

beforeAll(async () => {
  bus = await openTestBus('b', 'test');
});

afterAll(() => closeTestBus(bus));

const textFrame = (runId: string, content: string): SseFrame =>
  frame('text', runId, { agent: 'writer', content });

const taskEnvelope = (runId: string): TaskEnvelope => ({
  v: 1,
  run_id: runId,
  session_id: 'session-1',
  project_id: 'project-1',
  user_id: 'user-1',
  step: 0,
  role: 'writer',
  epoch: 0,
  generation_mode: 'fast',
  context: { message: '写一章', focus_file_id: null, attached_file_ids: [], ui_language: 'zh' },
});

async function streamMessages(stream: string): Promise<number> {
  return (await bus.jsm.streams.info(stream)).state.messages;
}

describe('ensureStreams', () => {
  it('is idempotent and keeps what the streams hold', async () => {
    const { names } = bus;
    const runId = randomUUID();
    await publishFrame(bus, textFrame(runId, 'kept'));
    const before = await bus.jsm.streams.info(names.streams.events);

    await ensureStreams(bus, settings);
    await ensureStreams(bus, settings);

    const after = await bus.jsm.streams.info(names.streams.events);
    expect(after.config.subjects).toEqual(before.config.subjects);
    expect(after.config.duplicate_window).toBe(before.config.duplicate_window);
    expect(after.state.messages).toBe(before.state.messages);
    expect(await countStored(bus, names.streams.events, names.events(runId))).toBe(1);

    const namespaced = (await bus.jsm.streams.names().next()).filter((name) =>
      name.startsWith(`${names.namespace.toUpperCase()}_`),
    );
    expect(namespaced.sort()).toEqual([names.streams.events, names.streams.runs, names.streams.tasks].sort());
    const router = await bus.jsm.consumers.info(names.streams.runs, names.consumers.router);
    expect(router.config.filter_subject).toBe(names.runStartAll);
  });
});

describe('publishEnvelope', () => {
  it('drops a second publish with the same msgId', async () => {
    const runId = randomUUID();
    const subject = bus.names.events(runId);
    const body = { v: 1, frame: textFrame(runId, 'once') } as const;
    const first = await publishEnvelope(bus, subject, EventEnvelope, body, { msgId: `${runId}:f0` });
    const second = await publishEnvelope(bus, subject, EventEnvelope, body, { msgId: `${runId}:f0` });
    expect(first.duplicate).toBe(false);
    expect(second.duplicate).toBe(true);
    expect(second.seq).toBe(first.seq);
    expect(await countStored(bus, bus.names.streams.events, subject)).toBe(1);
  });

  it('refuses an envelope that does not match its schema before sending', async () => {
    const runId = randomUUID();
    const subject = bus.names.events(runId);
    await expect(
      publishEnvelope(bus, subject, EventEnvelope, { v: 2, frame: textFrame(runId, 'x') } as never),
    ).rejects.toThrow();
    expect(await countStored(bus, bus.names.streams.events, subject)).toBe(0);
  });
});

describe('consumeDurable', () => {
  it('acks a valid envelope and terminates invalid or refused ones without redelivery', async () => {
    const { names } = bus;
    const role = 'writer';
    const consumer = await ensureRoleConsumer(bus, role, { ackWaitSeconds: 1 });
    const handled: TaskEnvelope[] = [];
    const invalid: Array<{ subject: string; error: InvalidEnvelopeError }> = [];
    const handle = await consumeDurable(bus, {
      stream: names.streams.tasks,
      consumer,
      schema: TaskEnvelope,
      concurrency: 4,
      logger,
      spanName: 'test task',
      async handle(envelope, context) {
        expect(context.deliveryCount).toBe(1);
        handled.push(envelope);
        return envelope.directive === 'refuse' ? term('refused by the handler') : ack;
      },
      async onInvalid(subject, error) {
        invalid.push({ subject, error });
      },
    });
    try {
      const validRun = randomUUID();
      const valid = taskEnvelope(validRun);
      await publishEnvelope(bus, names.task(role, validRun), TaskEnvelope, valid);
      await vi.waitFor(() => expect(handled).toHaveLength(1), { timeout: 10_000 });
      expect(handled[0]).toEqual(valid);
      // Work-queue retention: the ack removes the message.
      await vi.waitFor(async () => expect(await streamMessages(names.streams.tasks)).toBe(0), {
        timeout: 10_000,
      });

      const invalidRun = randomUUID();
      const invalidSubject = names.task(role, invalidRun);
      await bus.js.publish(invalidSubject, new TextEncoder().encode('{"v":2}'));
      await vi.waitFor(() => expect(invalid).toHaveLength(1), { timeout: 10_000 });
      expect(invalid[0]?.subject).toBe(invalidSubject);
      expect(invalid[0]?.error).toBeInstanceOf(InvalidEnvelopeError);
      expect(invalid[0]?.error.subject).toBe(invalidSubject);

      // A handler's term disposition is final as well.
      const refusedRun = randomUUID();
      await publishEnvelope(bus, names.task(role, refusedRun), TaskEnvelope, {
        ...taskEnvelope(refusedRun),
        directive: 'refuse',
      });
      await vi.waitFor(() => expect(handled).toHaveLength(2), { timeout: 10_000 });

      // Longer than ack_wait (1 s): a message that was only dropped would be redelivered by now
      // (nats-server 2.9 ignored `+TERM <reason>`, which redelivered it up to max_deliver times).
      await sleep(2500);
      expect(handled.map((envelope) => envelope.run_id)).toEqual([validRun, refusedRun]);
      expect(invalid).toHaveLength(1);
      const info = await bus.jsm.consumers.info(names.streams.tasks, consumer);
      expect(info.num_pending).toBe(0);
      expect(info.num_ack_pending).toBe(0);
      expect(info.num_redelivered).toBe(0);
    } finally {
      await handle.stop();
    }
    expect(handle.inFlight).toBe(0);
  });
});

describe('requestReply and serveRequests', () => {
  it('round-trips a request through a responder', async () => {
    const subject = bus.names.billingBalance;
    const seen: string[] = [];
    const responder = serveRequests(
      bus,
      subject,
      { request: BillingBalanceRequest, reply: BillingBalanceReply },
      {
        async handle(request) {
          seen.push(request.user_id);
          return { v: 1 as const, ok: true as const, credits: request.user_id.length };
        },
        invalidReply: { v: 1, ok: false, code: 'invalid_bus_message' },
        failureReply: { v: 1, ok: false, code: 'internal_error' },
      },
      logger,
    );
    try {
      const reply = await requestReply(
        bus,
        subject,
        { request: BillingBalanceRequest, reply: BillingBalanceReply },
        { v: 1, user_id: 'user-12345' },
        { timeoutMs: 5000 },
      );
      expect(reply).toEqual({ v: 1, ok: true, credits: 10 });
      expect(seen).toEqual(['user-12345']);

      // A malformed request gets the invalid reply rather than silence.
      const raw = await bus.connection.request(subject, new TextEncoder().encode('{"v":1}'), {
        timeout: 5000,
      });
      expect(BillingBalanceReply.parse(JSON.parse(new TextDecoder().decode(raw.data)))).toEqual({
        v: 1,
        ok: false,
        code: 'invalid_bus_message',
      });
      expect(seen).toEqual(['user-12345']);
    } finally {
      await responder.stop();
    }
  });

  it('throws BusRequestError no_responders when nobody serves the subject', async () => {
    const subject = bus.names.health(uniqueName('nobody'));
    const error = await requestReply(
      bus,
      subject,
      { request: BillingBalanceRequest, reply: HealthReply },
      { v: 1, user_id: 'u' },
      { timeoutMs: 5000 },
    ).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(BusRequestError);
    expect(error).toMatchObject({ name: 'BusRequestError', kind: 'no_responders', subject });
  });
});
