/**
 * Start-up under CPU starvation (README "Fault tolerance"): starts each service `--starts` times,
 * one start at a time, while busy-loop processes (`--busy-per-core`, default 2 per core) keep
 * every core saturated, and prints per service how many starts became ready, time to ready
 * p50 / max and how many exited, with the load average. A start that exits or is not ready
 * within `--ready-timeout-s` counts as failed. Loopback only; every busy loop stops by itself
 * after `--max-minutes` even if this script is killed.
 *
 *   node test/load/startup-under-load.ts [--starts 20] [--services router,writer] [--busy-per-core 2]
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { parseArgs } from 'node:util';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { busNames } from '@quill/contracts';
import { createTestDatabase } from '@quill/db/testing';
import { startFakeLlm } from '@quill/fake-llm';
import {
  fillLocalCompileCache,
  SERVICE_START_ORDER,
  type ServiceName,
  spawnService,
  stopProcesses,
} from '../support/service-process.ts';
import { testUrls, uniqueName } from '../support/urls.ts';
import { loadAverage } from './support/proc.ts';
import { distribution, rounded } from './support/stats.ts';

const { values } = parseArgs({
  options: {
    starts: { type: 'string', default: '20' },
    services: { type: 'string', default: SERVICE_START_ORDER.join(',') },
    'busy-per-core': { type: 'string', default: '2' },
    'ready-timeout-s': { type: 'string', default: '120' },
    'max-minutes': { type: 'string', default: '30' },
  },
});
const starts = Number(values.starts);
const services = values.services.split(',') as ServiceName[];
const busyCount = Number(values['busy-per-core']) * availableParallelism();
const readyTimeoutMs = Number(values['ready-timeout-s']) * 1000;
const maxMs = Number(values['max-minutes']) * 60_000;

const namespace = uniqueName('su');
// Services start from the compile cache, as the image's do (docs/decisions/0040).
fillLocalCompileCache();
const database = await createTestDatabase();
const fakeLlm = await startFakeLlm({ port: 0 });
const env: Record<string, string> = {
  QUILL_ENV_PRIORITY: 'none',
  NATS_URL: testUrls.nats,
  REDIS_URL: testUrls.redis,
  DATABASE_URL: database.url,
  QUILL_BUS_NAMESPACE: namespace,
  QUILL_REDIS_PREFIX: `${namespace}:`,
  LLM_PRIMARY_BASE_URL: fakeLlm.url,
  GATEWAY_PORT: '0',
  DATABASE_POOL_MAX: '4',
  LOG_LEVEL: 'info',
};

// Bounded busy loops: each ends by itself at the deadline, so none can outlive a killed bench.
const deadline = Date.now() + maxMs;
const busy: ChildProcess[] = Array.from({ length: busyCount }, () =>
  spawn(process.execPath, ['-e', `const end = ${deadline}; while (Date.now() < end) {}`], {
    stdio: 'ignore',
  }),
);

interface ServiceFigures {
  service: ServiceName;
  starts: number;
  ready: number;
  exited: number;
  timedOut: number;
  readyMs: ReturnType<typeof distribution>;
  loadAverage: number;
  firstFailure?: string;
}
const figures: ServiceFigures[] = [];
try {
  // Let the load average climb to the saturation it reports.
  await new Promise((resolve) => setTimeout(resolve, 5000));
  for (const service of services) {
    const readyMs: number[] = [];
    let exited = 0;
    let timedOut = 0;
    let firstFailure: string | undefined;
    for (let start = 0; start < starts && Date.now() < deadline - readyTimeoutMs; start++) {
      const began = performance.now();
      try {
        const process = await spawnService(service, `${service}-su${start}`, env, { readyTimeoutMs });
        readyMs.push(performance.now() - began);
        await stopProcesses([process.child]);
      } catch (error) {
        const text = String((error as Error).message);
        if (/not ready/.test(text)) timedOut++;
        else exited++;
        firstFailure ??= text.split('\n').filter(Boolean).slice(0, 3).join(' | ').slice(0, 400);
      }
    }
    const row: ServiceFigures = {
      service,
      starts: readyMs.length + exited + timedOut,
      ready: readyMs.length,
      exited,
      timedOut,
      readyMs: distribution(readyMs),
      loadAverage: loadAverage(),
      ...(firstFailure ? { firstFailure } : {}),
    };
    figures.push(row);
    console.log(
      `${service.padEnd(9)} ready ${row.ready}/${row.starts}  exited ${exited}  timed out ${timedOut}  ` +
        `time to ready p50 ${Math.round(row.readyMs.p50)} ms  max ${Math.round(row.readyMs.max)} ms  ` +
        `load ${row.loadAverage}`,
    );
    if (firstFailure) console.log(`          first failure: ${firstFailure}`);
  }
} finally {
  for (const child of busy) child.kill('SIGKILL');
  await fakeLlm.close();
  await database.drop();
  await deleteStreams();
}
console.log(
  JSON.stringify(
    rounded({
      bench: 'startup-under-load',
      busyProcesses: busyCount,
      cores: availableParallelism(),
      figures,
    }),
  ),
);

async function deleteStreams(): Promise<void> {
  const connection = await connect({ servers: testUrls.nats, name: 'startup-bench-cleanup' });
  try {
    const jsm = await jetstreamManager(connection);
    for (const stream of Object.values(busNames(namespace).streams)) {
      await jsm.streams.delete(stream).catch(() => undefined);
    }
  } finally {
    await connection.close();
  }
}
