/** Redis key builders (docs/architecture.md "What each service owns", its Redis keys column); every key carries the deployment / test prefix. */
export interface RedisKeys {
  readonly prefix: string;
  sessionLock(sessionId: string): string;
  userSemaphore(userId: string): string;
  steer(runId: string): string;
  stop(runId: string): string;
  llmPin(sessionId: string): string;
  llmBreaker(provider: string): string;
  runModelCalls(runId: string): string;
  runTokens(runId: string): string;
  /** Prefix for the per-user request rate limiter's own keys. */
  readonly rateLimit: string;
  /** Refreshed while any gateway streams the run to a client (disconnect grace). */
  runWatchers(runId: string): string;
  /** A stream ticket by the sha256 of its value (a key dump holds no usable ticket). */
  streamTicket(ticketHash: string): string;
  /** Routers' run leases: a sorted set of run ids by expiry, and each run's JetStream ack subject. */
  readonly runLeases: string;
  readonly runLeaseAcks: string;
}

/** `redisKeys('quill')` → `quill:lock:session:<id>`; an empty prefix gives the bare names. */
export function redisKeys(prefix: string): RedisKeys {
  const base = prefix === '' || prefix.endsWith(':') ? prefix : `${prefix}:`;
  return {
    prefix: base,
    sessionLock: (sessionId) => `${base}lock:session:${sessionId}`,
    userSemaphore: (userId) => `${base}sem:user:${userId}`,
    steer: (runId) => `${base}steer:${runId}`,
    stop: (runId) => `${base}stop:${runId}`,
    llmPin: (sessionId) => `${base}llm:pin:${sessionId}`,
    llmBreaker: (provider) => `${base}llm:cb:${provider}`,
    runModelCalls: (runId) => `${base}run:model_calls:${runId}`,
    runTokens: (runId) => `${base}run:tokens:${runId}`,
    rateLimit: `${base}rl:`,
    runWatchers: (runId) => `${base}sse:${runId}`,
    streamTicket: (ticketHash) => `${base}sse:ticket:${ticketHash}`,
    runLeases: `${base}router:leases`,
    runLeaseAcks: `${base}router:lease_acks`,
  };
}
