/** Service URLs for tests: the global setup guarantees these are set (env or testcontainers). */
export const testUrls = {
  nats: process.env.NATS_URL ?? 'nats://127.0.0.1:4222',
  redis: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
  database: process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres',
};

/** A short unique name for per-test-file isolation (bus namespace, Redis prefix, database). */
export function uniqueName(prefix: string): string {
  return `${prefix}${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`.toLowerCase();
}

/** A minimal environment for a child process: enough to find binaries, none of the runner's NODE_OPTIONS. */
export function childProcessEnv(extra: Record<string, string>): Record<string, string> {
  return { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...extra };
}
