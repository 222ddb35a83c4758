import { connect as connectTcp } from 'node:net';
import type { StartedTestContainer } from 'testcontainers';
import { fillLocalCompileCache } from './service-process.ts';

/**
 * Tests talk to real NATS (JetStream), Redis and PostgreSQL. For each of NATS_URL / REDIS_URL /
 * DATABASE_URL that is not exported, the local service at its default URL (the config defaults,
 * README "Configuration") is used when its port answers; only a service that is neither exported
 * nor listening locally is started with testcontainers (needs a Docker engine). Workers inherit
 * the URLs through process.env.
 */
// PostgreSQL's own `postgres` database: it always exists, and tests only use the URL to reach the
// server (each test file creates its own database).
export const LOCAL_SERVICES = [
  { key: 'NATS_URL', port: 4222, url: 'nats://127.0.0.1:4222' },
  { key: 'REDIS_URL', port: 6379, url: 'redis://127.0.0.1:6379' },
  { key: 'DATABASE_URL', port: 5432, url: 'postgres://postgres@127.0.0.1:5432/postgres' },
] as const;

type ServiceKey = (typeof LOCAL_SERVICES)[number]['key'];

const started: StartedTestContainer[] = [];

/** Whether something accepts TCP connections on 127.0.0.1:port within the timeout. */
export function portAnswers(port: number, timeoutMs = 1000): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connectTcp({ host: '127.0.0.1', port });
    const done = (answered: boolean) => {
      socket.destroy();
      resolve(answered);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

/** Sets every unset URL whose local default answers; returns the keys still missing. */
export async function useLocalDefaults(env: NodeJS.ProcessEnv = process.env): Promise<ServiceKey[]> {
  const missing: ServiceKey[] = [];
  for (const service of LOCAL_SERVICES) {
    if (env[service.key]) continue;
    if (await portAnswers(service.port)) env[service.key] = service.url;
    else missing.push(service.key);
  }
  return missing;
}

export async function setup(): Promise<void> {
  // Every service process the tests spawn then starts from compiled modules, as the image's do.
  fillLocalCompileCache();
  const missing = await useLocalDefaults();
  if (missing.length === 0) return;
  const { GenericContainer, Wait } = await import('testcontainers');
  if (missing.includes('NATS_URL')) {
    const nats = await new GenericContainer('nats:2.9')
      .withCommand(['-js'])
      .withExposedPorts(4222)
      .withWaitStrategy(Wait.forLogMessage(/Server is ready/))
      .start();
    started.push(nats);
    process.env.NATS_URL = `nats://${nats.getHost()}:${nats.getMappedPort(4222)}`;
  }
  if (missing.includes('REDIS_URL')) {
    const redis = await new GenericContainer('redis:7').withExposedPorts(6379).start();
    started.push(redis);
    process.env.REDIS_URL = `redis://${redis.getHost()}:${redis.getMappedPort(6379)}`;
  }
  if (missing.includes('DATABASE_URL')) {
    const postgres = await new GenericContainer('postgres:15')
      .withEnvironment({ POSTGRES_HOST_AUTH_METHOD: 'trust' })
      .withExposedPorts(5432)
      .withWaitStrategy(Wait.forLogMessage(/ready to accept connections/, 2))
      .start();
    started.push(postgres);
    process.env.DATABASE_URL = `postgres://postgres@${postgres.getHost()}:${postgres.getMappedPort(5432)}/postgres`;
  }
}

export async function teardown(): Promise<void> {
  await Promise.allSettled(started.map((container) => container.stop()));
}
