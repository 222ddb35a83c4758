import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { type OpsServer, startOpsServer } from '../src/ops-server.ts';

let server: OpsServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function statusOf(path: string): Promise<{ status: number; body: string }> {
  const response = await fetch(`${server!.address}${path}`);
  return { status: response.status, body: await response.text() };
}

describe('ops server', () => {
  it('is live at once, ready only once marked, and not ready while draining', async () => {
    server = await startOpsServer({
      host: '127.0.0.1',
      port: 0,
      readyGraceMs: 30_000,
      logger: pino({ level: 'silent' }),
    });
    expect((await statusOf('/livez')).status).toBe(200);
    expect(await statusOf('/readyz')).toEqual({
      status: 503,
      body: '{"status":"not_ready","reason":"starting"}',
    });
    server.state.started = true;
    expect((await statusOf('/readyz')).status).toBe(200);
    server.state.draining = true;
    expect(await statusOf('/readyz')).toEqual({
      status: 503,
      body: '{"status":"not_ready","reason":"draining"}',
    });
    expect((await statusOf('/livez')).status).toBe(200);
  });

  it('stays ready through a NATS blip shorter than the grace, and fails after it', async () => {
    server = await startOpsServer({
      host: '127.0.0.1',
      port: 0,
      readyGraceMs: 60_000,
      logger: pino({ level: 'silent' }),
    });
    server.state.started = true;
    server.state.busDownSince = Date.now() - 1000;
    expect((await statusOf('/readyz')).status).toBe(200);
    server.state.busDownSince = Date.now() - 61_000;
    expect(await statusOf('/readyz')).toEqual({
      status: 503,
      body: '{"status":"not_ready","reason":"nats_unreachable"}',
    });
    expect((await statusOf('/livez')).status).toBe(200);
  });

  it('answers /metrics without a meter provider and 404 elsewhere', async () => {
    server = await startOpsServer({
      host: '127.0.0.1',
      port: 0,
      readyGraceMs: 0,
      logger: pino({ level: 'silent' }),
    });
    expect((await statusOf('/metrics')).status).toBe(200);
    expect((await statusOf('/nope')).status).toBe(404);
  });
});
