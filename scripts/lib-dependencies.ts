import { connect } from '@nats-io/transport-node';
import type { Config } from '@quill/config';
import { adminUrl } from '@quill/db';
import { Redis } from 'ioredis';
import pg from 'pg';

/** How to start each dependency on a Debian machine with the distribution's packages. */
const START_HINTS = {
  nats: 'start-stop-daemon --start --oknodo --background --exec /usr/sbin/nats-server -- -a 127.0.0.1 -p 4222 -js -sd /var/lib/nats-server',
  redis: 'redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no',
  postgres: 'pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start',
} as const;

export interface DependencyProblem {
  name: keyof typeof START_HINTS;
  url: string;
  error: string;
  hint: string;
}

/** Checks NATS (with JetStream), Redis and PostgreSQL; returns what is unreachable and how to fix it. */
export async function checkDependencies(config: Config): Promise<DependencyProblem[]> {
  const problems: DependencyProblem[] = [];
  const record = (name: DependencyProblem['name'], url: string, error: unknown) =>
    problems.push({
      name,
      url,
      error: error instanceof Error ? error.message : String(error),
      hint: START_HINTS[name],
    });

  try {
    const connection = await connect({ servers: config.NATS_URL, timeout: 2000, reconnect: false });
    try {
      const { jetstreamManager } = await import('@nats-io/jetstream');
      await (await jetstreamManager(connection, { timeout: 2000 })).getAccountInfo();
    } finally {
      await connection.close();
    }
  } catch (error) {
    record('nats', config.NATS_URL, error);
  }
  const redis = new Redis(config.REDIS_URL, {
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  try {
    await redis.connect();
    await redis.ping();
  } catch (error) {
    record('redis', config.REDIS_URL, error);
  } finally {
    redis.disconnect();
  }
  const client = new pg.Client({
    connectionString: adminUrl(config.DATABASE_URL),
    connectionTimeoutMillis: 2000,
  });
  try {
    await client.connect();
    await client.query('SELECT 1');
  } catch (error) {
    record('postgres', config.DATABASE_URL, error);
  } finally {
    await client.end().catch(() => undefined);
  }
  return problems;
}
