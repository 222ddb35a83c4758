import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { busNames } from '@quill/contracts';
import { seedDemo } from '@quill/db/seed';
import { createTestDatabase } from '@quill/db/testing';
import { type FakeLlm, startFakeLlm } from '@quill/fake-llm';
import type { Pool } from 'pg';
import { type FakeLlmProcess, type FakeLlmProcessOptions, startFakeLlmProcess } from './fake-llm-process.ts';
import {
  SERVICE_START_ORDER,
  type ServiceName,
  type ServiceProcess,
  spawnService,
  stopProcesses,
} from './service-process.ts';
import { testUrls, uniqueName } from './urls.ts';

export type { ServiceName, ServiceProcess };

export interface StackOptions {
  replicas?: Partial<Record<ServiceName, number>>;
  /** The bus namespace (default a new unique one), e.g. for streams a benchmark makes beforehand. */
  namespace?: string;
  env?: Record<string, string>;
  otlpEndpoint?: string;
  /**
   * Runs the fake LLM as its own process (benchmarks) instead of inside the test: drive it through
   * `fakeLlmProcess`; the in-memory methods of `fakeLlm` then throw.
   */
  fakeLlmProcess?: FakeLlmProcessOptions;
  /** Node options for every service process (benchmarks: `--trace-gc`). */
  nodeFlags?: readonly string[];
  /** Every line a service process writes to its stdout, as it arrives. */
  onServiceLine?: (instanceId: string, line: string) => void;
}

export interface Stack {
  readonly namespace: string;
  readonly redisPrefix: string;
  readonly databaseUrl: string;
  readonly pool: Pool;
  readonly fakeLlm: FakeLlm;
  /** Set when the stack was started with the `fakeLlmProcess` option. */
  readonly fakeLlmProcess?: FakeLlmProcess;
  readonly apiKey: string;
  readonly userId: string;
  readonly projectId: string;
  readonly services: ServiceProcess[];
  readonly gateways: string[];
  /** Env shared by every service process (for starting extra replicas). */
  readonly env: Record<string, string>;
  /** Starts one more replica; `env` overrides the shared settings for it alone. */
  startService(name: ServiceName, env?: Record<string, string>): Promise<ServiceProcess>;
  stop(): Promise<void>;
}

/**
 * A whole Quill stack as separate processes against the real NATS, Redis and Postgres, isolated
 * by its own bus namespace, Redis prefix and database, with the fake LLM as the model.
 */
export async function startStack(options: StackOptions = {}): Promise<Stack> {
  const namespace = options.namespace ?? uniqueName('t');
  const services: ServiceProcess[] = [];
  // What is undone, newest first, when the start fails part-way (README "Two commands": a stack
  // that fails to start leaves no processes, streams or database behind).
  const undo: Array<() => Promise<void>> = [() => deleteStreams(namespace)];
  let counter = 0;
  const startService = async (
    name: ServiceName,
    overrides: Record<string, string> = {},
  ): Promise<ServiceProcess> => {
    const instanceId = `${name}-${++counter}`;
    const onServiceLine = options.onServiceLine;
    const service = await spawnService(
      name,
      instanceId,
      { ...env, ...overrides },
      {
        ...(options.nodeFlags ? { nodeFlags: options.nodeFlags } : {}),
        ...(onServiceLine ? { onLine: (line: string) => onServiceLine(instanceId, line) } : {}),
      },
    );
    services.push(service);
    return service;
  };
  let env: Record<string, string> = {};
  let databaseUrl: string | undefined;
  try {
    const database = await createTestDatabase();
    databaseUrl = database.url;
    undo.push(() => database.drop());
    const fakeLlmProcess = options.fakeLlmProcess
      ? await startFakeLlmProcess(options.fakeLlmProcess)
      : undefined;
    const fakeLlm = fakeLlmProcess ? remoteOnly(fakeLlmProcess) : await startFakeLlm({ port: 0 });
    undo.push(() => fakeLlm.close());
    const apiKey = `qk_test_${uniqueName('')}`;
    const demo = await seedDemo(database.pool, { apiKey });
    env = {
      QUILL_ENV_PRIORITY: 'none',
      NATS_URL: testUrls.nats,
      REDIS_URL: testUrls.redis,
      DATABASE_URL: database.url,
      QUILL_BUS_NAMESPACE: namespace,
      QUILL_REDIS_PREFIX: `${namespace}:`,
      LLM_PRIMARY_BASE_URL: fakeLlm.url,
      GATEWAY_PORT: '0',
      LOG_LEVEL: 'info',
      DATABASE_POOL_MAX: '4',
      // The test receiver reads OTLP/JSON (test/support/otlp-receiver.ts).
      ...(options.otlpEndpoint
        ? { OTEL_EXPORTER_OTLP_ENDPOINT: options.otlpEndpoint, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' }
        : {}),
      ...options.env,
    };
    const replicas = {
      context: 1,
      billing: 1,
      router: 1,
      writer: 1,
      reviewer: 1,
      gateway: 1,
      ...options.replicas,
    };
    undo.push(() => stopAll(services));
    for (const name of SERVICE_START_ORDER) {
      // Settled, not Promise.all: a replica still starting when its sibling failed must be in
      // `services` before the clean-up stops them.
      const starts = await Promise.allSettled(
        Array.from({ length: replicas[name] }, () => startService(name)),
      );
      const failed = starts.find((start) => start.status === 'rejected');
      if (failed) throw failed.reason;
    }
    return stackOf({
      namespace,
      database,
      fakeLlm,
      fakeLlmProcess,
      apiKey,
      demo,
      services,
      env,
      startService,
    });
  } catch (error) {
    const pids = services.flatMap((service) => (service.child.pid ? [service.child.pid] : []));
    for (const step of undo.reverse()) await step().catch(() => undefined);
    throw new StackStartError({ namespace, pids, databaseUrl }, error);
  }
}

/** A stack that did not start; everything it had started is gone (the fields say what it was). */
export class StackStartError extends Error {
  readonly namespace: string;
  readonly pids: number[];
  readonly databaseUrl: string | undefined;
  constructor(parts: { namespace: string; pids: number[]; databaseUrl: string | undefined }, cause: unknown) {
    super(`stack ${parts.namespace} failed to start: ${(cause as Error)?.message ?? String(cause)}`, {
      cause,
    });
    this.name = new.target.name;
    this.namespace = parts.namespace;
    this.pids = parts.pids;
    this.databaseUrl = parts.databaseUrl;
  }
}

function stackOf(parts: {
  namespace: string;
  database: Awaited<ReturnType<typeof createTestDatabase>>;
  fakeLlm: FakeLlm;
  fakeLlmProcess: FakeLlmProcess | undefined;
  apiKey: string;
  demo: Awaited<ReturnType<typeof seedDemo>>;
  services: ServiceProcess[];
  env: Record<string, string>;
  startService(name: ServiceName): Promise<ServiceProcess>;
}): Stack {
  const { namespace, database, fakeLlm, fakeLlmProcess, apiKey, demo, services, env, startService } = parts;
  return {
    namespace,
    redisPrefix: `${namespace}:`,
    databaseUrl: database.url,
    pool: database.pool,
    fakeLlm,
    ...(fakeLlmProcess ? { fakeLlmProcess } : {}),
    apiKey,
    userId: demo.userId,
    projectId: demo.projectId,
    services,
    get gateways() {
      return (
        services
          // A killed process has a signalCode and no exitCode: it is gone as well.
          .filter(
            (service) =>
              service.name === 'gateway' &&
              service.child.exitCode === null &&
              service.child.signalCode === null,
          )
          .map((service) => service.baseUrl!)
      );
    },
    env,
    startService,
    async stop() {
      await stopAll(services);
      await fakeLlm.close();
      await database.drop();
      await deleteStreams(namespace);
    },
  };
}

/** The process's URL and lifecycle under the in-memory interface; its scripts go through HTTP. */
function remoteOnly(process: FakeLlmProcess): FakeLlm {
  const remote = (): never => {
    throw new Error('the fake LLM runs as a process: use stack.fakeLlmProcess');
  };
  return {
    url: process.url,
    port: process.port,
    close: () => process.close(),
    addScript: remote,
    clearScripts: remote,
    requests: remote,
    clearRequests: remote,
    gateReached: remote,
    releaseGate: remote,
  };
}

/**
 * The stack's streams go with it: left behind, every test file and benchmark would grow the
 * shared nats-server (hundreds of streams, hundreds of MB) and slow every later one.
 */
async function deleteStreams(namespace: string): Promise<void> {
  const connection = await connect({ servers: testUrls.nats, name: 'stack-cleanup' });
  try {
    const jsm = await jetstreamManager(connection);
    const { runs, tasks, events } = busNames(namespace).streams;
    for (const name of [runs, tasks, events]) await jsm.streams.delete(name).catch(() => undefined);
  } finally {
    await connection.close();
  }
}

function stopAll(services: ServiceProcess[]): Promise<void> {
  return stopProcesses(services.map((service) => service.child));
}
