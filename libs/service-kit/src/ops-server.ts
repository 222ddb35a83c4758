import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { currentTelemetry } from '@quill/telemetry';
import type { Logger } from 'pino';

export interface ReadinessState {
  /** Set once the service has wired its handlers (main.ts calls `runtime.markReady()`). */
  started: boolean;
  /** Set at SIGTERM: the replica leaves its Service before it stops serving. */
  draining: boolean;
  /** Epoch ms since which NATS has been unreachable; undefined while connected. */
  busDownSince: number | undefined;
}

export interface OpsServer {
  readonly state: ReadinessState;
  /** `http://host:port` once listening. */
  readonly address: string;
  close(): Promise<void>;
}

/**
 * The health + metrics port every service serves (docs/operations.md "Probes"):
 * - `/livez` answers while the event loop does; it checks no dependency, so a NATS or Redis
 *   outage never gets pods restarted (a restart cannot fix a dependency).
 * - `/readyz` is 503 until the service is wired, while draining, and once NATS has been
 *   unreachable for longer than the grace; Redis and PostgreSQL blips are not checked at all,
 *   because every replica shares them and failing readiness would empty the Service at once.
 * - `/metrics` is the Prometheus scrape of `@quill/telemetry`'s meter provider.
 * It starts before any dependency is waited for, so a startup probe sees the process alive.
 */
export async function startOpsServer(options: {
  host: string;
  port: number;
  readyGraceMs: number;
  logger: Logger;
}): Promise<OpsServer> {
  const state: ReadinessState = { started: false, draining: false, busDownSince: undefined };
  const readiness = (): { ready: boolean; reason?: string } => {
    if (state.draining) return { ready: false, reason: 'draining' };
    if (!state.started) return { ready: false, reason: 'starting' };
    if (state.busDownSince !== undefined && Date.now() - state.busDownSince > options.readyGraceMs)
      return { ready: false, reason: 'nats_unreachable' };
    return { ready: true };
  };
  const server: Server = createServer((request, response) => {
    const path = (request.url ?? '/').split('?')[0];
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      response.writeHead(405, { allow: 'GET, HEAD' }).end();
      return;
    }
    if (path === '/livez') {
      response.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"ok"}');
      return;
    }
    if (path === '/readyz') {
      const { ready, reason } = readiness();
      response
        .writeHead(ready ? 200 : 503, { 'content-type': 'application/json' })
        .end(JSON.stringify(ready ? { status: 'ready' } : { status: 'not_ready', reason }));
      return;
    }
    if (path === '/metrics') {
      const telemetry = currentTelemetry();
      if (telemetry) telemetry.serveMetrics(request, response);
      else response.writeHead(200, { 'content-type': 'text/plain' }).end('# no meter provider\n');
      return;
    }
    response.writeHead(404).end();
  });
  // Probes and scrapes are short; an idle keep-alive socket must not hold shutdown open.
  server.keepAliveTimeout = 5000;
  server.listen(options.port, options.host);
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', reject);
  });
  const bound = server.address() as AddressInfo;
  const host = bound.family === 'IPv6' ? `[${bound.address}]` : bound.address;
  const address = `http://${host}:${bound.port}`;
  options.logger.info({ ops_address: address }, 'ops server listening');
  return {
    state,
    address,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
