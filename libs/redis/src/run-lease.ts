import type { Redis } from 'ioredis';
import { inBatches } from './batches.ts';
import { defineLuaScript } from './lua-script.ts';

/*
 * Router run leases (README "Fault tolerance"): the router holding a run keeps its expiry, in the
 * server's clock, in one sorted set, next to the JetStream ack subject of the run's delivery. A
 * peer that finds a lease expired claims it atomically and hands the delivery back (`-NAK`), so
 * JetStream redelivers the run at once instead of after the ack wait.
 */

const nowMs = `local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)`;

// KEYS: leases, acks. ARGV: run id, ack subject, ttl ms.
const HOLD = defineLuaScript(`${nowMs}
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[3]), ARGV[1])
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
return 1`);

// ARGV: ttl ms, then run ids. Renews every lease still held (a lease a peer already claimed
// stays claimed) and returns the run ids whose lease was gone: their late owner lost the run.
const RENEW_ALL = defineLuaScript(`${nowMs}
local expiry = now + tonumber(ARGV[1])
local lost = {}
for index = 2, #ARGV do
  if redis.call('ZSCORE', KEYS[1], ARGV[index]) then
    redis.call('ZADD', KEYS[1], 'XX', expiry, ARGV[index])
  else
    table.insert(lost, ARGV[index])
  end
end
return lost`);

/** Run ids per renewal call: bounds one script's time on the server and its argument list. */
export const RUN_LEASE_RENEWAL_BATCH = 500;

// Returns the ack subjects of up to ARGV[1] expired leases, each removed by this one call.
const CLAIM_EXPIRED = defineLuaScript(`${nowMs}
local expired = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, tonumber(ARGV[1]))
local claimed = {}
for _, run in ipairs(expired) do
  redis.call('ZREM', KEYS[1], run)
  local ack = redis.call('HGET', KEYS[2], run)
  redis.call('HDEL', KEYS[2], run)
  if ack then
    table.insert(claimed, run)
    table.insert(claimed, ack)
  end
end
return claimed`);

export interface LeaseKeys {
  leases: string;
  acks: string;
}

export async function holdRunLease(
  redis: Redis,
  keys: LeaseKeys,
  runId: string,
  ackSubject: string,
  ttlMs: number,
): Promise<void> {
  await HOLD.run(redis, [keys.leases, keys.acks], [runId, ackSubject, ttlMs]);
}

/**
 * Renews the leases of all these runs, one script call per `RUN_LEASE_RENEWAL_BATCH` of them,
 * and returns the run ids whose lease was gone: a peer claimed it and the run is being taken over.
 */
export async function renewRunLeases(
  redis: Redis,
  keys: LeaseKeys,
  runIds: readonly string[],
  ttlMs: number,
): Promise<string[]> {
  return inBatches(
    runIds,
    RUN_LEASE_RENEWAL_BATCH,
    async (batch) => (await RENEW_ALL.run(redis, [keys.leases], [ttlMs, ...batch])) as string[],
  );
}

export async function releaseRunLease(redis: Redis, keys: LeaseKeys, runId: string): Promise<void> {
  await redis.multi().zrem(keys.leases, runId).hdel(keys.acks, runId).exec();
}

/** Claims expired leases (each by exactly one caller): `[{ runId, ackSubject }]`. */
export async function claimExpiredRunLeases(
  redis: Redis,
  keys: LeaseKeys,
  limit = 50,
): Promise<Array<{ runId: string; ackSubject: string }>> {
  const flat = (await CLAIM_EXPIRED.run(redis, [keys.leases, keys.acks], [limit])) as string[];
  const claimed: Array<{ runId: string; ackSubject: string }> = [];
  for (let index = 0; index + 1 < flat.length; index += 2) {
    claimed.push({ runId: flat[index]!, ackSubject: flat[index + 1]! });
  }
  return claimed;
}
