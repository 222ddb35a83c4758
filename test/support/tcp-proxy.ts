import { connect, createServer, type Server, type Socket } from 'node:net';

/**
 * A TCP proxy on loopback that a test controls, to cut a service off from a dependency (here:
 * PostgreSQL) and let it back in, at points the test chooses. `cut()` destroys every open
 * connection and resets new ones until `restore()`; `attemptsWhileCut` counts the connections
 * refused meanwhile, so a test can wait until the service has really tried.
 */
export interface TcpProxy {
  readonly port: number;
  /** A URL like `target` with its host and port replaced by the proxy's. */
  urlFor(target: string): string;
  cut(): void;
  restore(): void;
  /**
   * Cuts (as `cut`) once `bytes` more have come from the target, counted from now: a connection
   * lost in the middle of a transfer, wherever the transfer's timing falls. Settles at the cut.
   */
  cutAfter(bytes: number): Promise<void>;
  /** Freezes every connection (bytes stop moving, nothing closes), like a server that hangs. */
  pause(): void;
  resume(): void;
  readonly attemptsWhileCut: number;
  /** Connections open through the proxy now (both ends counted once). */
  readonly connections: number;
  close(): Promise<void>;
}

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const open = new Set<Socket>();
  let isCut = false;
  let isPaused = false;
  let attemptsWhileCut = 0;
  let cutTrigger: { remaining: number; fire(): void } | undefined;
  const server: Server = createServer((client) => {
    if (isCut) {
      attemptsWhileCut++;
      client.resetAndDestroy();
      return;
    }
    const upstream = connect(target.port, target.host);
    open.add(client);
    open.add(upstream);
    if (isPaused) {
      client.pause();
      upstream.pause();
    }
    const drop = () => {
      client.destroy();
      upstream.destroy();
      open.delete(client);
      open.delete(upstream);
    };
    client.on('error', drop).on('close', drop);
    upstream.on('error', drop).on('close', drop);
    client.pipe(upstream);
    upstream.pipe(client);
    upstream.on('data', (chunk: Buffer) => {
      if (!cutTrigger) return;
      cutTrigger.remaining -= chunk.length;
      if (cutTrigger.remaining > 0) return;
      const trigger = cutTrigger;
      cutTrigger = undefined;
      trigger.fire();
    });
  });
  const cut = () => {
    isCut = true;
    for (const socket of open) socket.resetAndDestroy();
    open.clear();
  };
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    port,
    urlFor(url) {
      const parsed = new URL(url);
      parsed.hostname = '127.0.0.1';
      parsed.port = String(port);
      return parsed.toString();
    },
    cut,
    restore() {
      isCut = false;
    },
    cutAfter(bytes) {
      return new Promise<void>((resolve) => {
        cutTrigger = {
          remaining: bytes,
          fire: () => {
            cut();
            resolve();
          },
        };
      });
    },
    pause() {
      isPaused = true;
      for (const socket of open) socket.pause();
    },
    resume() {
      isPaused = false;
      for (const socket of open) socket.resume();
    },
    get attemptsWhileCut() {
      return attemptsWhileCut;
    },
    get connections() {
      return open.size / 2;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of open) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
