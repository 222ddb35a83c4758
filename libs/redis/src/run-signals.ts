import type { Redis } from 'ioredis';
import { defineLuaScript } from './lua-script.ts';

/**
 * Records that a run was asked to stop, for workers that join after the broadcast on
 * `run.<runId>.control` went out.
 */
export async function setStopFlag(redis: Redis, key: string, reason: string, ttlMs: number): Promise<void> {
  await redis.set(key, reason, 'PX', ttlMs);
}

export async function getStopFlag(redis: Redis, key: string): Promise<string | null> {
  return redis.get(key);
}

// Check and push in one step, so two interjections racing for the last slot cannot both win.
const pushSteerScript = defineLuaScript(`
local length = redis.call('LLEN', KEYS[1])
if length >= tonumber(ARGV[2]) then return {0, length} end
length = redis.call('RPUSH', KEYS[1], ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return {1, length}`);

/** Queues an interjection for the run; refused (accepted false) when maxLength are already waiting. */
export async function pushSteer(
  redis: Redis,
  key: string,
  text: string,
  maxLength: number,
  ttlMs: number,
): Promise<{ accepted: boolean; length: number }> {
  const [accepted, length] = (await pushSteerScript.run(redis, [key], [text, maxLength, ttlMs])) as [
    number,
    number,
  ];
  return { accepted: accepted === 1, length };
}

// Everything a model call's turn opens with, in one round trip (it is on the way to every call's
// first token): the queued interjections taken (each handed out once), one model call counted
// against the run's budget, and the run's tokens so far. Same keys and expiries as the
// separate commands it replaces.
const openTurnScript = defineLuaScript(`
local steering = redis.call('LRANGE', KEYS[1], 0, -1)
if #steering > 0 then redis.call('DEL', KEYS[1]) end
local calls = redis.call('INCR', KEYS[2])
redis.call('EXPIRE', KEYS[2], ARGV[1])
local tokens = redis.call('GET', KEYS[3])
return {steering, calls, tokens or '0'}`);

/** Opens a model call's turn: drains the run's interjections, counts the call, reads the tokens spent. */
export async function openModelTurn(
  redis: Redis,
  keys: { steer: string; modelCalls: string; tokens: string },
  counterTtlSeconds: number,
): Promise<{ steering: string[]; modelCalls: number; tokensSpent: number }> {
  const [steering, calls, tokens] = (await openTurnScript.run(
    redis,
    [keys.steer, keys.modelCalls, keys.tokens],
    [counterTtlSeconds],
  )) as [string[], number, string];
  return { steering, modelCalls: Number(calls), tokensSpent: Number(tokens) };
}
