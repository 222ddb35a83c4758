import type { StartedTestContainer } from 'testcontainers';

/**
 * Tests talk to real NATS (JetStream), Redis and PostgreSQL. CI and the dev machines export
 * NATS_URL / REDIS_URL / DATABASE_URL for the local services; where one is missing it is started
 * with testcontainers (needs a Docker engine). Workers inherit the URLs through process.env.
 */
const started: StartedTestContainer[] = [];

export async function setup(): Promise<void> {
  const missing = (['NATS_URL', 'REDIS_URL', 'DATABASE_URL'] as const).filter((key) => !process.env[key]);
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
