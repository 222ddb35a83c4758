import { type Bus, decodeEnvelope, onReconnect, publishCore } from '@quill/bus';
import { ApiKeyRevokedEnvelope } from '@quill/contracts';
import { getUser, hashApiKey, type Queryable, type User } from '@quill/db';
import { findApiKeyUser } from '@quill/db/gateway';
import { LRUCache } from 'lru-cache';

/** An API key's owner and the key's id (per-key usage). */
export interface KeyHolder {
  user: User;
  keyId: string;
}

/**
 * Who a request's credential names, remembered for `ttlMs` (GATEWAY_AUTH_CACHE_TTL_MS) so a
 * client's requests do not each read the same rows: an API key's holder by the key's hash (the
 * raw key is not kept), and the user a token or a stream ticket names by id. A user row is never
 * changed once made; a key only gets revoked, and a revoked key is dropped at once here and, by a
 * broadcast on the bus, on every other gateway. A gateway whose connection to the bus was cut
 * may have missed one: it forgets every key when it reconnects, and the TTL bounds the cut
 * itself (docs/decisions/0067-credentials-remembered-briefly.md). Only what was found is kept: an
 * unknown key is read again, so a key made a moment ago works at once. `ttlMs` 0 keeps nothing.
 */
export interface CredentialCache {
  keyHolder(key: string): Promise<KeyHolder | null>;
  user(userId: string): Promise<User | null>;
  /** A key was revoked (its row already says so): forgotten here, and on the other gateways. */
  revoked(keyId: string): void;
  close(): void;
}

/** How many keys and users one gateway remembers at most; the least recently used go first. */
const MAX_ENTRIES = 10_000;

export function createCredentialCache(dependencies: {
  pool: Queryable;
  bus: Bus;
  ttlMs: number;
}): CredentialCache {
  const { pool, bus, ttlMs } = dependencies;
  const keys = ttlMs > 0 ? new LRUCache<string, KeyHolder>({ max: MAX_ENTRIES, ttl: ttlMs }) : undefined;
  const users = ttlMs > 0 ? new LRUCache<string, User>({ max: MAX_ENTRIES, ttl: ttlMs }) : undefined;
  // Bumped by every revocation: a key read that was under way meanwhile may have read the row
  // before the revocation, so its answer is used once but not remembered.
  let revocations = 0;

  const forget = (keyId: string) => {
    revocations++;
    if (!keys) return;
    // A key is remembered under its hash only; revocations are rare, so a scan is enough.
    const hashes = [...keys.entries()].flatMap(([hash, holder]) => (holder.keyId === keyId ? [hash] : []));
    for (const hash of hashes) keys.delete(hash);
  };
  const forgetEveryKey = () => {
    revocations++;
    keys?.clear();
  };
  const subject = bus.names.apiKeyRevoked;
  const subscription = bus.connection.subscribe(subject, {
    callback: (error, message) => {
      if (error) return;
      try {
        forget(decodeEnvelope(ApiKeyRevokedEnvelope, subject, message.data).key_id);
      } catch {
        // A revocation this gateway cannot read (another version's?) still names some key.
        forgetEveryKey();
      }
    },
  });

  // Core messages sent while the connection was down are not delivered after it comes back.
  const stopWatching = onReconnect(bus, forgetEveryKey);

  return {
    async keyHolder(key) {
      const hash = hashApiKey(key);
      const known = keys?.get(hash);
      if (known) return known;
      const before = revocations;
      const found = await findApiKeyUser(pool, key);
      if (found && keys && revocations === before) keys.set(hash, found);
      return found;
    },
    async user(userId) {
      const known = users?.get(userId);
      if (known) return known;
      const found = await getUser(pool, userId);
      if (found) users?.set(userId, found);
      return found;
    },
    revoked(keyId) {
      forget(keyId);
      // While the connection is being re-established the client keeps the message and sends it
      // on reconnect; only a closed connection (this gateway shutting down) refuses it, and then
      // the other gateways forget the key when its TTL ends.
      try {
        publishCore(bus, subject, ApiKeyRevokedEnvelope, { v: 1, key_id: keyId });
      } catch {
        // The row is revoked; the author's request succeeded.
      }
    },
    close() {
      stopWatching();
      subscription.unsubscribe();
    },
  };
}
