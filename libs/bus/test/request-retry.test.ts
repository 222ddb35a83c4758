import { BillingBalanceReply, BillingBalanceRequest, isReplicaFailure } from '@quill/contracts';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeTestBus, openTestBus } from '../../../test/support/test-bus.ts';
import { testUrls, uniqueName } from '../../../test/support/urls.ts';
import { type Bus, BusRequestError, connectBus, requestReply, serveRequests } from '../src/index.ts';

const logger = pino({ level: 'silent' });
const schemas = { request: BillingBalanceRequest, reply: BillingBalanceReply };

let bus: Bus;
beforeAll(async () => {
  bus = await openTestBus('rq', 'request-retry');
});
afterAll(() => closeTestBus(bus));

/** A second process's connection to the same namespace: a replica that can die on its own. */
function replica(name: string): Promise<Bus> {
  return connectBus({ url: testUrls.nats, namespace: bus.names.namespace, name });
}

/** A replica answering balance requests; `answerAfterMs` makes it slow to answer each one. */
function serveBalance(on: Bus, subject: string, credits: number, seen: string[], answerAfterMs = 0) {
  return serveRequests(
    on,
    subject,
    schemas,
    {
      async handle(request) {
        seen.push(request.user_id);
        if (answerAfterMs > 0) await new Promise((resolve) => setTimeout(resolve, answerAfterMs));
        return { v: 1 as const, ok: true as const, credits };
      },
      invalidReply: { v: 1, ok: false, code: 'invalid_bus_message' },
      failureReply: { v: 1, ok: false, code: 'service_unavailable' },
    },
    logger,
  );
}

describe('requestReply with a deadline', () => {
  it('reaches a live replica when the one that took the request dies before answering', async () => {
    const subject = bus.names.health(uniqueName('dying'));
    const dying = await replica('dying');
    const live = await replica('live');
    const seen: string[] = [];
    let liveResponder: ReturnType<typeof serveBalance> | undefined;
    // The dying replica takes the first request and its connection goes, as under kill -9; the
    // live one joins the queue group only then, so the first attempt surely went to the dead one.
    const subscription = dying.connection.subscribe(subject, { queue: subject });
    void (async () => {
      for await (const _message of subscription) {
        await dying.connection.close();
        liveResponder = serveBalance(live, subject, 7, seen);
      }
    })();
    await dying.connection.flush();
    try {
      const reply = await requestReply(
        bus,
        subject,
        schemas,
        { v: 1, user_id: 'author' },
        {
          timeoutMs: 500,
          deadlineMs: 10_000,
        },
      );
      expect(reply).toEqual({ v: 1, ok: true, credits: 7 });
      expect(seen).toEqual(['author']);
    } finally {
      await liveResponder?.stop();
      await live.close();
    }
  });

  it('takes the answer of a replica slower than one attempt’s timeout', async () => {
    // The only replica answers each request long after an attempt's timeout, as a live one on a
    // saturated machine does: the attempt that timed out must still be listening for it.
    const subject = bus.names.health(uniqueName('slow'));
    const seen: string[] = [];
    const responder = serveBalance(bus, subject, 5, seen, 1200);
    try {
      const reply = await requestReply(
        bus,
        subject,
        schemas,
        { v: 1, user_id: 'author' },
        { timeoutMs: 200, deadlineMs: 30_000 },
      );
      expect(reply).toEqual({ v: 1, ok: true, credits: 5 });
      // It was asked again meanwhile (each ask is idempotent), and the first answer ended the call.
      expect(seen.length).toBeGreaterThan(1);
    } finally {
      await responder.stop();
    }
  });

  it('waits for a replica that is not serving yet, within the deadline', async () => {
    const subject = bus.names.health(uniqueName('late'));
    const seen: string[] = [];
    const asking = requestReply(
      bus,
      subject,
      schemas,
      { v: 1, user_id: 'author' },
      {
        timeoutMs: 500,
        deadlineMs: 10_000,
      },
    );
    await new Promise((resolve) => setTimeout(resolve, 300));
    const responder = serveBalance(bus, subject, 3, seen);
    try {
      expect(await asking).toEqual({ v: 1, ok: true, credits: 3 });
    } finally {
      await responder.stop();
    }
  });

  it('asks again after a reply that says the replica failed, and returns the last one at the deadline', async () => {
    const subject = bus.names.health(uniqueName('flaky'));
    let calls = 0;
    const responder = serveRequests(
      bus,
      subject,
      schemas,
      {
        async handle() {
          if (++calls < 3) throw new Error('database unreachable');
          return { v: 1 as const, ok: true as const, credits: 1 };
        },
        invalidReply: { v: 1, ok: false, code: 'invalid_bus_message' },
        failureReply: { v: 1, ok: false, code: 'service_unavailable' },
      },
      logger,
    );
    try {
      const options = { timeoutMs: 2000, deadlineMs: 10_000, retryReply: isReplicaFailure };
      expect(await requestReply(bus, subject, schemas, { v: 1, user_id: 'u' }, options)).toEqual({
        v: 1,
        ok: true,
        credits: 1,
      });
      expect(calls).toBe(3);

      // Failing for good: the failure reply comes back once the deadline is spent.
      calls = Number.NEGATIVE_INFINITY;
      const reply = await requestReply(
        bus,
        subject,
        schemas,
        { v: 1, user_id: 'u' },
        {
          ...options,
          deadlineMs: 600,
        },
      );
      expect(reply).toEqual({ v: 1, ok: false, code: 'service_unavailable' });
    } finally {
      await responder.stop();
    }
  });

  it('gives up with BusRequestError once the deadline has passed with nobody answering', async () => {
    const subject = bus.names.health(uniqueName('nobody'));
    const error = await requestReply(
      bus,
      subject,
      schemas,
      { v: 1, user_id: 'u' },
      {
        timeoutMs: 200,
        deadlineMs: 800,
      },
    ).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(BusRequestError);
    expect((error as BusRequestError).kind).toMatch(/no_responders|timeout/);
  });
});
