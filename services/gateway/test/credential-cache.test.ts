import { type Bus, connectBus } from '@quill/bus';
import type { User } from '@quill/db';
import { createApiKey, createUser, findApiKeyUser, revokeApiKey } from '@quill/db/gateway';
import { createTestDatabase, type TestDatabase } from '@quill/db/testing';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { eventually } from '../../../test/support/api.ts';
import { startTcpProxy } from '../../../test/support/tcp-proxy.ts';
import { closeTestBus, openTestBus } from '../../../test/support/test-bus.ts';
import { testUrls } from '../../../test/support/urls.ts';
import { type CredentialCache, createCredentialCache } from '../src/credential-cache.ts';

/** Real Postgres and NATS: two caches on two connections are two gateways. */
let database: TestDatabase;
let bus: Bus;
let otherBus: Bus;
let author: User;
const caches: CredentialCache[] = [];

beforeAll(async () => {
  database = await createTestDatabase({ serverUrl: testUrls.database });
  bus = await openTestBus('cc', 'credential-cache-test');
  otherBus = await connectBus({ url: testUrls.nats, namespace: bus.names.namespace, name: 'other-gateway' });
  author = await createUser(database.pool, { email: 'author@example.com', displayName: 'Author' });
});

afterEach(() => {
  for (const cache of caches.splice(0)) cache.close();
  vi.restoreAllMocks();
});

afterAll(async () => {
  await otherBus?.close();
  await closeTestBus(bus);
  await database?.drop();
});

function cacheOn(on: Bus, ttlMs: number): CredentialCache {
  const cache = createCredentialCache({ pool: database.pool, bus: on, ttlMs });
  caches.push(cache);
  return cache;
}

/** Statements sent through the pool from now on (the real pool still answers them). */
function countStatements(): { readonly count: number } {
  const spy = vi.spyOn(database.pool, 'query');
  return {
    get count() {
      return spy.mock.calls.length;
    },
  };
}

describe('the credential cache', () => {
  it('reads a key once while it is remembered, and an unknown key every time', async () => {
    const { key } = await createApiKey(database.pool, author.id, 'laptop');
    const cache = cacheOn(bus, 60_000);
    const statements = countStatements();
    const first = await cache.keyHolder(key);
    expect(first).toEqual(await findApiKeyUser(database.pool, key));
    expect(first?.user.id).toBe(author.id);
    const afterFirst = statements.count;
    expect(await cache.keyHolder(key)).toEqual(first);
    expect(statements.count).toBe(afterFirst);

    const unknown = `${key}x`;
    expect(await cache.keyHolder(unknown)).toBeNull();
    const afterUnknown = statements.count;
    expect(await cache.keyHolder(unknown)).toBeNull();
    expect(statements.count).toBe(afterUnknown + 1);
  });

  it('reads again once the TTL has passed, and every time with a TTL of 0', async () => {
    const { key } = await createApiKey(database.pool, author.id, 'short');
    const brief = cacheOn(bus, 1);
    const none = cacheOn(bus, 0);
    const statements = countStatements();
    await brief.keyHolder(key);
    // Longer than the TTL, whatever the machine's load: the entry can only be stale by then.
    await new Promise((wake) => setTimeout(wake, 20));
    await brief.keyHolder(key);
    expect(statements.count).toBe(2);
    await none.keyHolder(key);
    await none.keyHolder(key);
    expect(statements.count).toBe(4);
  });

  it('remembers the user a token names, and reads an unknown id every time', async () => {
    const cache = cacheOn(bus, 60_000);
    const statements = countStatements();
    expect(await cache.user(author.id)).toEqual(author);
    expect(await cache.user(author.id)).toEqual(author);
    expect(statements.count).toBe(1);
    const nobody = '00000000-0000-4000-8000-000000000000';
    expect(await cache.user(nobody)).toBeNull();
    expect(await cache.user(nobody)).toBeNull();
    expect(statements.count).toBe(3);
  });

  it('forgets a revoked key at once on the gateway that revoked it, and on another by the broadcast', async () => {
    const { id, key } = await createApiKey(database.pool, author.id, 'revoked');
    const kept = await createApiKey(database.pool, author.id, 'kept');
    const here = cacheOn(bus, 60_000);
    // Its TTL outlasts the test: only the broadcast can make it read the key again.
    const there = cacheOn(otherBus, 60_000);
    for (const cache of [here, there]) {
      expect((await cache.keyHolder(key))?.keyId).toBe(id);
      expect((await cache.keyHolder(kept.key))?.keyId).toBe(kept.id);
    }
    const statements = countStatements();
    expect(await revokeApiKey(database.pool, author.id, id)).toBe(true);
    here.revoked(id);
    expect(await here.keyHolder(key)).toBeNull();
    await eventually(async () => ((await there.keyHolder(key)) === null ? true : undefined));
    // The other key is still remembered on both.
    const beforeKept = statements.count;
    expect((await here.keyHolder(kept.key))?.keyId).toBe(kept.id);
    expect((await there.keyHolder(kept.key))?.keyId).toBe(kept.id);
    expect(statements.count).toBe(beforeKept);
  });

  it('forgets every key when its connection to the bus comes back: a broadcast sent meanwhile was lost', async () => {
    const target = new URL(testUrls.nats);
    const proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 4222) });
    const cutOff = await connectBus({
      url: proxy.urlFor(testUrls.nats),
      namespace: bus.names.namespace,
      name: 'cut-off-gateway',
    });
    try {
      const { id, key } = await createApiKey(database.pool, author.id, 'revoked while cut off');
      const here = cacheOn(bus, 60_000);
      // Its TTL outlasts the test: only the reconnect can make it read the key again.
      const there = cacheOn(cutOff, 60_000);
      expect((await there.keyHolder(key))?.keyId).toBe(id);
      proxy.cut();
      expect(await revokeApiKey(database.pool, author.id, id)).toBe(true);
      here.revoked(id);
      // Cut off, it still answers from what it remembers: the broadcast did not reach it.
      expect((await there.keyHolder(key))?.keyId).toBe(id);
      proxy.restore();
      await eventually(async () => ((await there.keyHolder(key)) === null ? true : undefined));
    } finally {
      proxy.restore();
      await cutOff.close();
      await proxy.close();
    }
  });

  it('forgets every key on a revocation it cannot read', async () => {
    const { key } = await createApiKey(database.pool, author.id, 'unreadable');
    const cache = cacheOn(bus, 60_000);
    await cache.keyHolder(key);
    const statements = countStatements();
    await cache.keyHolder(key);
    expect(statements.count).toBe(0);
    bus.connection.publish(bus.names.apiKeyRevoked, new TextEncoder().encode('{"v":2}'));
    await eventually(async () => {
      await cache.keyHolder(key);
      return statements.count > 0 ? true : undefined;
    });
  });

  it('does not remember a key read that was under way while a key was revoked', async () => {
    const { key } = await createApiKey(database.pool, author.id, 'racing');
    const cache = cacheOn(bus, 60_000);
    const query = database.pool.query.bind(database.pool);
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    // The first statement waits until a revocation went by: it may have read the row before it.
    const spy = vi
      .spyOn(database.pool, 'query')
      .mockImplementationOnce(((...args: Parameters<typeof query>) =>
        held.then(() => query(...args))) as typeof database.pool.query);
    const reading = cache.keyHolder(key);
    cache.revoked('00000000-0000-4000-8000-00000000abcd');
    release();
    expect((await reading)?.user.id).toBe(author.id);
    await cache.keyHolder(key);
    expect(spy.mock.calls.length).toBe(2);
  });
});
