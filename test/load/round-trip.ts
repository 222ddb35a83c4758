/**
 * The price of one message on this machine: a launch is a chain of ~200 messages between
 * processes (README "Performance", the hot-path notes), so what one round trip costs the client
 * and the server bounds what a launch can cost. Runs each kind of round trip the services make
 * one after another, `--count` times after a warm-up, through the same clients and settings the
 * services use (`createPool` with its prepared statements, `createRedis`, `connectBus` with the
 * request settle fix), against the machine's PostgreSQL, Redis and nats-server, and prints per
 * round trip: this process's CPU (the client, plus the responder for NATS request/reply, which
 * runs in this process too), the server's CPU, and the wall time, with the load average.
 *
 *   node test/load/round-trip.ts [--count 3000] [--rounds 3]
 */
import { parseArgs } from 'node:util';
import { RetentionPolicy, StorageType } from '@nats-io/jetstream';
import { connectBus } from '@quill/bus';
import { createPool } from '@quill/db';
import { createRedis } from '@quill/redis';
import { testUrls, uniqueName } from '../support/urls.ts';
import { cpuMs, loadAverage, namedProcessesCpuMs, natsServerPid } from './support/proc.ts';
import { rounded, table } from './support/stats.ts';

const { values } = parseArgs({
  options: {
    count: { type: 'string', default: '3000' },
    rounds: { type: 'string', default: '3' },
  },
});
const count = Number(values.count);
const rounds = Number(values.rounds);

interface Cost {
  client_us: number;
  server_us: number;
  wall_us: number;
}

/** The median round (by client CPU) of `rounds` passes of `count` sequential round trips. */
async function measure(serverCpuMs: () => number, roundTrip: () => Promise<unknown>): Promise<Cost> {
  for (let index = 0; index < Math.min(1000, count); index++) await roundTrip();
  const passes: Cost[] = [];
  for (let round = 0; round < rounds; round++) {
    const client = process.cpuUsage();
    const server = serverCpuMs();
    const started = performance.now();
    for (let index = 0; index < count; index++) await roundTrip();
    const wall = performance.now() - started;
    const used = process.cpuUsage(client);
    passes.push({
      client_us: (used.user + used.system) / count,
      server_us: ((serverCpuMs() - server) * 1000) / count,
      wall_us: (wall * 1000) / count,
    });
  }
  passes.sort((a, b) => a.client_us - b.client_us);
  return passes[Math.floor(passes.length / 2)]!;
}

const results: Record<string, Cost> = {};
const postgresCpu = () => namedProcessesCpuMs('postgres');
const pool = createPool(testUrls.database, { max: 4, applicationName: 'bench-round-trip' });
try {
  results['PostgreSQL: SELECT 1 (simple protocol), one client'] = await (async () => {
    const client = await pool.connect();
    try {
      return await measure(postgresCpu, () => client.query('SELECT 1'));
    } finally {
      client.release();
    }
  })();
  // A run-row-sized read: two parameters, four columns, prepared once per connection.
  const statement =
    'SELECT id, phase, epoch, created_at FROM (SELECT $1::uuid AS id, $2::text AS phase, 1 AS epoch, now() AS created_at) t WHERE id = $1';
  results['PostgreSQL: a prepared 4-column read through the pool'] = await measure(postgresCpu, () =>
    pool.query(statement, ['0b6f3f1e-3a4c-4c39-9d55-6d8f2a4c1b7e', 'running']),
  );
} finally {
  await pool.end();
}

const redis = createRedis(testUrls.redis, { connectionName: 'bench-round-trip' });
try {
  const key = uniqueName('bench:round-trip:');
  await redis.set(key, 'value', 'EX', 600);
  results['Redis: GET'] = await measure(
    () => namedProcessesCpuMs('redis-server'),
    () => redis.get(key),
  );
  await redis.del(key);
} finally {
  redis.disconnect();
}

const natsPid = natsServerPid(testUrls.nats);
const natsCpu = () => cpuMs(natsPid);
const namespace = uniqueName('rtt');
const bus = await connectBus({ url: testUrls.nats, namespace, name: 'bench-round-trip' });
const stream = `${namespace.toUpperCase()}_RTT`;
try {
  const echo = `${namespace}.echo`;
  const responder = bus.connection.subscribe(echo, {
    callback: (_error, message) => {
      message.respond(message.data);
    },
  });
  await bus.connection.flush();
  results['NATS: core request/reply (responder in this process)'] = await measure(natsCpu, () =>
    bus.connection.request(echo, 'ping', { timeout: 10_000 }),
  );
  responder.unsubscribe();
  await bus.jsm.streams.add({
    name: stream,
    subjects: [`${namespace}.stored.>`],
    retention: RetentionPolicy.Limits,
    storage: StorageType.File,
  });
  let sequence = 0;
  results['NATS: JetStream publish, acked (file store)'] = await measure(natsCpu, () =>
    bus.js.publish(`${namespace}.stored.r1`, 'frame', { msgID: `m${++sequence}` }),
  );
} finally {
  await bus.jsm.streams.delete(stream).catch(() => undefined);
  await bus.close();
}

console.log(
  `One round trip at a time, ${count} per pass, median of ${rounds} passes (load ${loadAverage()}): µs per round trip`,
);
console.log(
  table([
    ['round trip', 'client CPU', 'server CPU', 'wall'],
    ...Object.entries(results).map(([name, cost]) => [
      name,
      rounded(cost.client_us, 1),
      rounded(cost.server_us, 1),
      rounded(cost.wall_us, 1),
    ]),
  ]),
);
console.log(JSON.stringify({ bench: 'round-trip', count, rounds, load_average: loadAverage(), results }));
