/**
 * The gateway's part of the launch alone (docs/decisions/0030): `createRunLauncher` in this
 * process against the real Postgres, Redis and NATS, with billing and the router stood in by
 * responders that answer at once, so what is measured is the launcher's own round trips and CPU,
 * without the rest of the stack's noise. Each launch starts a new session (as `launch-path.ts`'s
 * runs do); the lock and slot are freed between launches as a finished run's router would.
 * Prints the launch's wall time (call → `runs.start` published) and this process's CPU per launch
 * (launcher and the two trivial responders).
 *
 *   node test/load/gateway-launch.ts [--runs 200]
 */
import { parseArgs } from 'node:util';
import type { Responder } from '@quill/bus';
import {
  AgentStreamBody,
  BillingReserveReply,
  BillingReserveRequest,
  RunOpenReply,
  RunOpenRequest,
} from '@quill/contracts';
import { createProject, createUser } from '@quill/db/gateway';
import { createTestDatabase } from '@quill/db/testing';
import { createRedis, redisKeys, releaseSemaphore, releaseSessionLock } from '@quill/redis';
import type { FastifyBaseLogger } from 'fastify';
import { pino } from 'pino';
import { standIn, testRunLauncher } from '../support/launch-stand-ins.ts';
import { closeTestBus, openTestBus } from '../support/test-bus.ts';
import { testUrls, uniqueName } from '../support/urls.ts';
import { loadAverage } from './support/proc.ts';
import { distribution, rounded } from './support/stats.ts';

const { values } = parseArgs({ options: { runs: { type: 'string', default: '200' } } });
const runs = Number(values.runs);
const WARM_UP = 20;

const load = loadAverage();
const database = await createTestDatabase({ serverUrl: testUrls.database });
const bus = await openTestBus('gl', 'gateway-launch-bench');
const redis = createRedis(testUrls.redis);
const keys = redisKeys(uniqueName('quill_bench_'));
const silent = pino({ level: 'silent' });
const responders: Responder[] = [];
const wall: number[] = [];
let cpuMs = 0;
try {
  const user = await createUser(database.pool, { email: 'bench@example.com', displayName: 'Bench' });
  const projectId = (await createProject(database.pool, { ownerId: user.id, title: 'bench' })).id;
  responders.push(
    standIn(
      bus,
      bus.names.billingReserve,
      { request: BillingReserveRequest, reply: BillingReserveReply },
      async () => ({ v: 1 as const, ok: true as const, credits_left: 10 }),
    ),
    standIn(bus, bus.names.routerRunOpen, { request: RunOpenRequest, reply: RunOpenReply }, async () => ({
      v: 1 as const,
      ok: true as const,
      phase: 'idle' as const,
    })),
  );
  const launch = testRunLauncher({ bus, pool: database.pool, redis, keys });
  const logger = silent as unknown as FastifyBaseLogger;
  let cpuAtStart = process.cpuUsage();
  for (let index = 0; index < runs + WARM_UP; index++) {
    if (index === WARM_UP) cpuAtStart = process.cpuUsage();
    const body = AgentStreamBody.parse({ project_id: projectId, message: `launch ${index}` });
    const started = performance.now();
    const run = await launch(user, body, logger);
    if (index >= WARM_UP) wall.push(performance.now() - started);
    await releaseSessionLock(redis, keys.sessionLock(run.sessionId), run.runId);
    await releaseSemaphore(redis, keys.userSemaphore(user.id), run.runId);
  }
  const cpu = process.cpuUsage(cpuAtStart);
  cpuMs = (cpu.user + cpu.system) / 1000 / runs;
} finally {
  for (const responder of responders) await responder.stop();
  await closeTestBus(bus);
  const found = await redis.keys(`${keys.prefix}*`);
  if (found.length) await redis.del(...found);
  await redis.quit();
  await database.drop();
}

const times = distribution(wall);
console.log(
  `gateway launch: ${runs} launches, p50 ${rounded(times.p50)} ms, p95 ${rounded(times.p95)} ms; CPU per launch ${rounded(cpuMs)} ms (launcher + stub responders); load average ${load}`,
);
console.log(
  JSON.stringify({
    bench: 'gateway-launch',
    runs,
    load_average: load,
    launch_p50_ms: rounded(times.p50),
    launch_p95_ms: rounded(times.p95),
    cpu_ms_per_launch: rounded(cpuMs),
  }),
);
