import { seedDemo } from '@quill/db';
import { createTestDatabase } from '@quill/db/testing';
import { startFakeLlm } from '@quill/fake-llm';
import type { Pool } from 'pg';
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
  env?: Record<string, string>;
  otlpEndpoint?: string;
}

export interface Stack {
  readonly namespace: string;
  readonly redisPrefix: string;
  readonly databaseUrl: string;
  readonly pool: Pool;
  readonly fakeLlm: Awaited<ReturnType<typeof startFakeLlm>>;
  readonly apiKey: string;
  readonly userId: string;
  readonly projectId: string;
  readonly services: ServiceProcess[];
  readonly gateways: string[];
  /** Env shared by every service process (for starting extra replicas). */
  readonly env: Record<string, string>;
  startService(name: ServiceName): Promise<ServiceProcess>;
  stop(): Promise<void>;
}

/**
 * A whole Quill stack as separate processes against the real NATS, Redis and Postgres, isolated
 * by its own bus namespace, Redis prefix and database, with the fake LLM as the model.
 */
export async function startStack(options: StackOptions = {}): Promise<Stack> {
  const namespace = uniqueName('t');
  const database = await createTestDatabase();
  const fakeLlm = await startFakeLlm({ port: 0 });
  const apiKey = `qk_test_${uniqueName('')}`;
  const demo = await seedDemo(database.pool, { apiKey });
  const env: Record<string, string> = {
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
    ...(options.otlpEndpoint ? { OTEL_EXPORTER_OTLP_ENDPOINT: options.otlpEndpoint } : {}),
    ...options.env,
  };
  const services: ServiceProcess[] = [];
  let counter = 0;

  const startService = async (name: ServiceName): Promise<ServiceProcess> => {
    const service = await spawnService(name, `${name}-${++counter}`, env);
    services.push(service);
    return service;
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
  try {
    for (const name of SERVICE_START_ORDER) {
      await Promise.all(Array.from({ length: replicas[name] }, () => startService(name)));
    }
  } catch (error) {
    await stopAll(services);
    await fakeLlm.close();
    await database.drop();
    throw error;
  }

  return {
    namespace,
    redisPrefix: `${namespace}:`,
    databaseUrl: database.url,
    pool: database.pool,
    fakeLlm,
    apiKey,
    userId: demo.userId,
    projectId: demo.projectId,
    services,
    get gateways() {
      return services
        .filter((service) => service.name === 'gateway' && service.child.exitCode === null)
        .map((service) => service.baseUrl!);
    },
    env,
    startService,
    async stop() {
      await stopAll(services);
      await fakeLlm.close();
      await database.drop();
    },
  };
}

function stopAll(services: ServiceProcess[]): Promise<void> {
  return stopProcesses(services.map((service) => service.child));
}
