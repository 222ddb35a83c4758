import { type Bus, type Responder, serveRequests } from '@quill/bus';
import type { RedisClient, RedisKeys } from '@quill/redis';
import type pg from 'pg';
import { pino } from 'pino';
import type { z } from 'zod';
import { createRunLauncher } from '../../services/gateway/src/run-launcher.ts';

const FAILED = { v: 1 as const, ok: false as const, code: 'internal_error' as const };
const silent = pino({ level: 'silent' });

/**
 * A responder standing in for another service on `subject` (billing, the router), answering
 * with `handle`; a request it cannot read or a handler that throws gets `internal_error`, as the
 * services' own responders answer. For tests and benchmarks of one service's side of a request.
 */
export function standIn<Q extends z.ZodType, R extends z.ZodType>(
  bus: Bus,
  subject: string,
  schemas: { request: Q; reply: R },
  handle: (request: z.infer<Q>) => Promise<z.input<R>>,
): Responder {
  // Every reply schema of a request Quill serves takes this refusal (libs/contracts envelopes).
  const failed = FAILED as z.input<R>;
  return serveRequests(bus, subject, schemas, { handle, invalidReply: failed, failureReply: failed }, silent);
}

/** The gateway's run launcher with the settings its tests and benchmark launch under. */
export function testRunLauncher(
  dependencies: { bus: Bus; pool: pg.Pool; redis: RedisClient; keys: RedisKeys },
  userMaxConcurrentRuns = 3,
): ReturnType<typeof createRunLauncher> {
  const { bus, pool, redis, keys } = dependencies;
  return createRunLauncher({
    bus,
    pool,
    redis,
    keys,
    settings: {
      sessionLockTtlMs: 60_000,
      requestTimeoutMs: 2_000,
      requestDeadlineMs: 4_000,
      userMaxConcurrentRuns,
    },
  });
}
