import { createServer } from 'node:net';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { busNames } from '@quill/contracts';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { LOCAL_SERVICES, portAnswers, useLocalDefaults } from './global-setup.ts';
import { StackStartError, startStack } from './stack.ts';
import { testUrls } from './urls.ts';

describe('global set-up', () => {
  it('uses the local default URL of every service whose port answers', async () => {
    // The local services run on their default ports on the machines this suite runs on.
    const env: NodeJS.ProcessEnv = {};
    expect(await useLocalDefaults(env)).toEqual([]);
    expect(env).toEqual(Object.fromEntries(LOCAL_SERVICES.map((service) => [service.key, service.url])));
  });

  it('keeps an exported URL and reports a port nobody listens on as missing', async () => {
    const env: NodeJS.ProcessEnv = { NATS_URL: 'nats://elsewhere:4222' };
    await useLocalDefaults(env);
    expect(env.NATS_URL).toBe('nats://elsewhere:4222');

    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as { port: number }).port;
    expect(await portAnswers(port)).toBe(true);
    await new Promise((resolve) => server.close(resolve));
    expect(await portAnswers(port)).toBe(false);
  });
});

describe('a stack whose start fails', () => {
  it('stops the processes it started and deletes its streams and database', async () => {
    // The gateway starts last and cannot bind an address this machine does not have.
    const error = await startStack({ env: { GATEWAY_HOST: '203.0.113.7' } }).catch((caught) => caught);
    expect(error).toBeInstanceOf(StackStartError);
    const { namespace, pids, databaseUrl } = error as StackStartError;
    expect(String(error.cause)).toMatch(/gateway-6 exited/);
    // context, billing, router, writer and reviewer were ready when the gateway exited.
    expect(pids.length).toBe(5);
    for (const pid of pids) expect(() => process.kill(pid, 0)).toThrow(/ESRCH/);

    const connection = await connect({ servers: testUrls.nats });
    try {
      const jsm = await jetstreamManager(connection);
      const streams = Object.values(busNames(namespace).streams);
      for (const stream of streams) {
        await expect(jsm.streams.info(stream)).rejects.toThrow(/not found/i);
      }
    } finally {
      await connection.close();
    }
    const server = new URL(testUrls.database);
    server.pathname = '/postgres';
    const client = new pg.Client({ connectionString: server.toString() });
    await client.connect();
    try {
      const name = new URL(databaseUrl!).pathname.slice(1);
      expect(name).toMatch(/^quill_test_/);
      const left = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
      expect(left.rowCount).toBe(0);
    } finally {
      await client.end();
    }
  });
});
