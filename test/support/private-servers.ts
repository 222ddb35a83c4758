import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A private broker process the benchmark may kill and restart without touching shared ones. */
export interface PrivateServer {
  readonly port: number;
  readonly url: string;
  /** SIGKILL, then the same server again on the same port (and, for NATS, the same store). */
  restart(): Promise<void>;
  /** SIGSTOP: connections stay open, nothing is read or answered (until `restart`). */
  freeze(): void;
  close(): Promise<void>;
}

export async function startPrivateNats(): Promise<PrivateServer> {
  const dir = mkdtempSync(join(tmpdir(), 'quill-chaos-nats-'));
  return privateServer('nats', (port) =>
    spawn('/usr/sbin/nats-server', ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', dir], {
      stdio: 'ignore',
    }),
  ).then((server) => ({
    ...server,
    close: async () => {
      await server.close();
      rmSync(dir, { recursive: true, force: true });
    },
  }));
}

export function startPrivateRedis(): Promise<PrivateServer> {
  return privateServer('redis', (port) =>
    spawn(
      'redis-server',
      ['--bind', '127.0.0.1', '--port', String(port), '--save', '', '--appendonly', 'no'],
      {
        stdio: 'ignore',
      },
    ),
  );
}

async function privateServer(
  scheme: 'nats' | 'redis',
  start: (port: number) => ChildProcess,
): Promise<PrivateServer> {
  const port = await freePort();
  let child = start(port);
  await waitForPort(port);
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
  };
  return {
    port,
    url: `${scheme}://127.0.0.1:${port}`,
    async restart() {
      await stop();
      child = start(port);
      await waitForPort(port);
    },
    freeze: () => child.kill('SIGSTOP'),
    close: stop,
  };
}

export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  return typeof address === 'object' && address ? address.port : 0;
}

export async function waitForPort(port: number): Promise<void> {
  for (let tries = 0; tries < 200; tries++) {
    const open = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (open) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`nothing listens on ${port}`);
}
