import { defineLuaScript, type RedisClient, type RedisKeys } from '@quill/redis';

export interface BreakerSettings {
  /** Provider failures within `windowMs` that open the breaker (when they are ≥ half the calls). */
  failureThreshold: number;
  windowMs: number;
  /** How long an open breaker refuses calls before letting one probe through. */
  cooldownMs: number;
  /** How long one replica's probe holds the half-open slot before another may probe. */
  probeLeaseMs: number;
}

/** `closed`: call normally; `probe`: this call is the half-open probe; `open`: do not call. */
export type Admission = 'closed' | 'probe' | 'open';
export type BreakerState = 'closed' | 'open' | 'half_open';

/*
 * One Redis hash per provider (`llm:cb:<provider>`), shared by every replica, changed only by
 * these scripts so that concurrent replicas never interleave a read-modify-write. Time is the
 * Redis server's (TIME), so replicas with skewed clocks still agree on windows and cooldowns.
 * Fields: state, failures, successes, window_start, open_until, probe_until (ms).
 */
const NOW = `local t = redis.call('TIME') local now = t[1] * 1000 + math.floor(t[2] / 1000)`;

// The admission of one provider's breaker `key`: closed, or the half-open probe, or open.
const ADMIT_FUNCTION = `local function admit(key, probeLeaseMs, ttlMs)
  local state = redis.call('HGET', key, 'state')
  if not state or state == 'closed' then return 'closed' end
  if state == 'open' then
    if now < tonumber(redis.call('HGET', key, 'open_until')) then return 'open' end
    redis.call('HSET', key, 'state', 'half_open', 'probe_until', now + tonumber(probeLeaseMs))
    redis.call('PEXPIRE', key, ttlMs)
    return 'probe'
  end
  if now < tonumber(redis.call('HGET', key, 'probe_until') or '0') then return 'open' end
  redis.call('HSET', key, 'probe_until', now + tonumber(probeLeaseMs))
  redis.call('PEXPIRE', key, ttlMs)
  return 'probe'
end`;

// ARGV: probeLeaseMs, ttlMs
const ADMIT = defineLuaScript(`${NOW}
${ADMIT_FUNCTION}
return admit(KEYS[1], ARGV[1], ARGV[2])`);

// KEYS: the session's pin, then each provider's breaker in the configured order. ARGV:
// probeLeaseMs, ttlMs, then the providers' names in that order. The provider a session's call
// goes to first (the pinned one when configured, else the first) and its admission.
const ADMIT_FIRST = defineLuaScript(`${NOW}
${ADMIT_FUNCTION}
local pinned = redis.call('GET', KEYS[1])
local first = 1
for index = 3, #ARGV do
  if ARGV[index] == pinned then first = index - 2 end
end
return { ARGV[first + 2], admit(KEYS[first + 1], ARGV[1], ARGV[2]) }`);

// ARGV: outcome (success|failure), threshold, windowMs, cooldownMs, ttlMs. Returns the new state.
const RECORD = defineLuaScript(`${NOW}
local state = redis.call('HGET', KEYS[1], 'state') or 'closed'
if state == 'open' then return 'open' end
if state == 'half_open' then
  if ARGV[1] == 'success' then redis.call('DEL', KEYS[1]) return 'closed' end
  redis.call('HSET', KEYS[1], 'state', 'open', 'open_until', now + tonumber(ARGV[4]), 'failures', 0, 'successes', 0)
  redis.call('PEXPIRE', KEYS[1], ARGV[5])
  return 'open'
end
local windowStart = tonumber(redis.call('HGET', KEYS[1], 'window_start') or '-1')
if windowStart < 0 or now - windowStart >= tonumber(ARGV[3]) then
  redis.call('HSET', KEYS[1], 'state', 'closed', 'window_start', now, 'failures', 0, 'successes', 0)
end
redis.call('PEXPIRE', KEYS[1], ARGV[5])
if ARGV[1] == 'success' then redis.call('HINCRBY', KEYS[1], 'successes', 1) return 'closed' end
local failures = redis.call('HINCRBY', KEYS[1], 'failures', 1)
local successes = tonumber(redis.call('HGET', KEYS[1], 'successes') or '0')
if failures >= tonumber(ARGV[2]) and failures >= successes then
  redis.call('HSET', KEYS[1], 'state', 'open', 'open_until', now + tonumber(ARGV[4]))
  return 'open'
end
return 'closed'`);

/** The provider a call goes to first and that provider's admission. */
export interface FirstAdmission {
  provider: string;
  admission: Admission;
}

export interface CircuitBreaker {
  admit(provider: string): Promise<Admission>;
  /**
   * A session's call opens on the provider its pin names (`llm:pin:<sessionId>`, see
   * session-pin.ts) when that is one of `providers`, else on the first of them: the pin read and
   * that provider's admission in one round trip, both on the way to the model request.
   */
  admitFirst(sessionId: string, providers: readonly string[]): Promise<FirstAdmission>;
  recordSuccess(provider: string): Promise<BreakerState>;
  recordFailure(provider: string): Promise<BreakerState>;
}

export function createCircuitBreaker(
  redis: RedisClient,
  keys: RedisKeys,
  settings: BreakerSettings,
): CircuitBreaker {
  // Long enough to outlive any window, cooldown and probe; an idle provider's hash then vanishes.
  const ttlMs = 2 * (settings.windowMs + settings.cooldownMs + settings.probeLeaseMs);
  const record = async (provider: string, outcome: 'success' | 'failure') =>
    (await RECORD.run(
      redis,
      [keys.llmBreaker(provider)],
      [outcome, settings.failureThreshold, settings.windowMs, settings.cooldownMs, ttlMs],
    )) as BreakerState;
  return {
    admit: async (provider) =>
      (await ADMIT.run(redis, [keys.llmBreaker(provider)], [settings.probeLeaseMs, ttlMs])) as Admission,
    admitFirst: async (sessionId, providers) => {
      const [provider, admission] = (await ADMIT_FIRST.run(
        redis,
        [keys.llmPin(sessionId), ...providers.map((name) => keys.llmBreaker(name))],
        [settings.probeLeaseMs, ttlMs, ...providers],
      )) as [string, Admission];
      return { provider, admission };
    },
    recordSuccess: (provider) => record(provider, 'success'),
    recordFailure: (provider) => record(provider, 'failure'),
  };
}

export interface BreakerStatus {
  state: BreakerState;
  /** Provider failures in the current window. */
  failures: number;
  /** While open: when a probe will be let through (ISO). */
  open_until?: string;
}

/**
 * Every provider's breaker as stored in Redis, for `/health`. An open breaker past its cooldown
 * reads `half_open`: the next call will probe it.
 */
export async function readBreakerStates<P extends string>(
  redis: RedisClient,
  keys: RedisKeys,
  providers: readonly P[],
): Promise<Record<P, BreakerStatus>> {
  const [seconds, micros] = await redis.time();
  const now = Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
  const hashes = await Promise.all(providers.map((provider) => redis.hgetall(keys.llmBreaker(provider))));
  const states = {} as Record<P, BreakerStatus>;
  providers.forEach((provider, index) => {
    const hash = hashes[index] ?? {};
    const stored = (hash.state ?? 'closed') as BreakerState;
    const openUntil = Number(hash.open_until ?? 0);
    const state = stored === 'open' && now >= openUntil ? 'half_open' : stored;
    states[provider] = {
      state,
      failures: Number(hash.failures ?? 0),
      ...(state === 'open' ? { open_until: new Date(openUntil).toISOString() } : {}),
    };
  });
  return states;
}
