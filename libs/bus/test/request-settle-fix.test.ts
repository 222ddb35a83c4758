import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { RequestOne } from '@nats-io/nats-core/internal';
import { connect, errors, type NatsConnection } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testUrls, uniqueName } from '../../../test/support/urls.ts';
import { installRequestSettleFix, requestMethodsMatch } from '../src/request-settle-fix.ts';

/**
 * The module object request.js reads `RequestError` from at each construction (its CommonJS
 * `errors_1`, directly and through its `errors` table): swapping both counts every RequestError
 * the request code builds.
 */
const require = createRequire(import.meta.url);
const natsCoreRoot = dirname(require.resolve('@nats-io/nats-core/internal'));
type ErrorClass = new (...args: ConstructorParameters<typeof Error>) => Error;
const errorsModule = require(join(natsCoreRoot, 'errors.js')) as {
  RequestError: ErrorClass;
  errors: { RequestError: ErrorClass };
};

async function countRequestErrors(action: () => Promise<void> | void): Promise<number> {
  const original = errorsModule.RequestError;
  let built = 0;
  const counted = class CountedRequestError extends original {
    constructor(...args: ConstructorParameters<typeof Error>) {
      super(...args);
      built++;
    }
  };
  errorsModule.RequestError = counted;
  errorsModule.errors.RequestError = counted;
  try {
    await action();
  } finally {
    errorsModule.RequestError = original;
    errorsModule.errors.RequestError = original;
  }
  return built;
}

function fakeMux() {
  const cancelled: unknown[] = [];
  return { cancelled, cancel: (request: unknown) => cancelled.push(request) };
}

let connection: NatsConnection;
beforeAll(async () => {
  expect(installRequestSettleFix()).toBe(true);
  connection = await connect({ servers: testUrls.nats, noAsyncTraces: true });
});
afterAll(() => connection.close());

describe('the nats.js request settle fix', () => {
  it('was written against the installed nats.js (an upgrade that changes these methods fails here)', () => {
    expect(requestMethodsMatch()).toBe(true);
  });

  it('builds no Error for an answered request, and still rejects a cancelled waiting one', async () => {
    const mux = fakeMux();
    const answered = new RequestOne(mux as never, 'subject', { timeout: 1000 }, false);
    const reply = { data: new Uint8Array([1]) };
    expect(await countRequestErrors(() => answered.resolver(null as never, reply as never))).toBe(0);
    await expect(answered.deferred).resolves.toBe(reply);
    expect(mux.cancelled).toEqual([answered]);

    // A request still waiting when it is cancelled is the library's own path: its Error is built.
    const waiting = new RequestOne(mux as never, 'subject', { timeout: 1000 }, false);
    const rejected = expect(waiting.deferred).rejects.toThrow('cancelled');
    expect(await countRequestErrors(() => waiting.cancel())).toBe(1);
    await rejected;
    expect(mux.cancelled).toEqual([answered, waiting]);
  });

  it('keeps a failed request failing with the library error (no Error built after it)', async () => {
    const mux = fakeMux();
    const failed = new RequestOne(mux as never, 'subject', { timeout: 1000 }, false);
    const cause = new errors.NoRespondersError('subject');
    const rejected = expect(failed.deferred).rejects.toThrow();
    // The resolver wraps a non-timeout error in one RequestError; the cancel after it builds none.
    expect(await countRequestErrors(() => failed.resolver(cause, {} as never))).toBe(1);
    await rejected;
    expect(mux.cancelled).toEqual([failed]);
  });

  it('leaves requests over a real connection answered, timed out and refused as before', async () => {
    const subject = uniqueName('settle.fix');
    const subscription = connection.subscribe(subject, {
      callback: (_error, message) => {
        message.respond('pong');
      },
    });
    await connection.flush();
    let answers: string[] = [];
    const built = await countRequestErrors(async () => {
      answers = await Promise.all(
        Array.from({ length: 50 }, async () =>
          (await connection.request(subject, 'ping', { timeout: 5000 })).string(),
        ),
      );
    });
    expect(answers).toEqual(Array(50).fill('pong'));
    expect(built).toBe(0);
    subscription.unsubscribe();

    // Nobody listens: the server answers no responders at once.
    const refused = await connection.request(uniqueName('nobody'), 'ping', { timeout: 5000 }).catch((e) => e);
    expect(refused).toBeInstanceOf(errors.RequestError);
    expect((refused as InstanceType<typeof errors.RequestError>).isNoResponders()).toBe(true);

    // Somebody listens and never answers: the request's own timer ends it.
    const silent = uniqueName('silent');
    const listener = connection.subscribe(silent, { callback: () => undefined });
    await connection.flush();
    await expect(connection.request(silent, 'ping', { timeout: 50 })).rejects.toBeInstanceOf(
      errors.TimeoutError,
    );
    listener.unsubscribe();
  });

  it('still rejects a request waiting when its connection closes', async () => {
    const other = await connect({ servers: testUrls.nats, noAsyncTraces: true });
    const silent = uniqueName('closing');
    const listener = other.subscribe(silent, { callback: () => undefined });
    await other.flush();
    const pending = other.request(silent, 'ping', { timeout: 60_000 }).catch((e: unknown) => e);
    listener.unsubscribe();
    await other.close();
    const error = await pending;
    expect(error).toBeInstanceOf(Error);
    expect(String((error as Error).message)).toMatch(/closed|disconnected/);
  });
});
