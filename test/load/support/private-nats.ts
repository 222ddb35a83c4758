import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stopProcesses } from '../../support/service-process.ts';
import { sleep } from './stats.ts';

/** What nats-server's monitoring port says about one client connection (`/connz`). */
export interface ConnectionCounters {
  readonly name: string;
  /** Bytes and messages the server sent to this client. */
  readonly outBytes: number;
  readonly outMsgs: number;
  /** Messages this client sent to the server (publishes, requests, acks, pulls). */
  readonly inMsgs: number;
}

export interface PrivateNats {
  readonly url: string;
  readonly pid: number;
  /** Bytes and messages the server sent to all its clients so far (`/varz`). */
  totals(): Promise<{ outBytes: number; outMsgs: number }>;
  connections(): Promise<ConnectionCounters[]>;
  stop(): Promise<void>;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

/**
 * A nats-server of the benchmark's own, with JetStream in a temporary directory and its
 * monitoring port open: the machine's server (shared with every test) has no monitoring port,
 * and its traffic would not be the benchmark's alone. The binary is the machine's (`nats-server`
 * on PATH, the same 2.9 as the shared one).
 */
export async function startPrivateNats(): Promise<PrivateNats> {
  const [port, monitor] = [await freePort(), await freePort()];
  const store = mkdtempSync(join(tmpdir(), 'quill-bench-nats-'));
  const child: ChildProcess = spawn(
    'nats-server',
    ['-a', '127.0.0.1', '-p', String(port), '-m', String(monitor), '-js', '-sd', store],
    { stdio: 'ignore' },
  );
  // A benchmark that dies before its `stop` (its output piped into `head`, a crash) takes its
  // server with it: one left running is another nats-server on the machine for every later one.
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);
  const base = `http://127.0.0.1:${monitor}`;
  const get = async <T>(path: string): Promise<T> => (await (await fetch(`${base}${path}`)).json()) as T;
  for (let attempt = 0; ; attempt++) {
    try {
      const health = await fetch(`${base}/healthz?js-enabled-only=true`);
      if (health.ok) break;
    } catch {
      // Not listening yet.
    }
    if (attempt > 100 || child.exitCode !== null) throw new Error('the private nats-server did not start');
    await sleep(100);
  }
  return {
    url: `nats://127.0.0.1:${port}`,
    pid: child.pid!,
    async totals() {
      const varz = await get<{ out_bytes: number; out_msgs: number }>('/varz');
      return { outBytes: varz.out_bytes, outMsgs: varz.out_msgs };
    },
    async connections() {
      const connz = await get<{
        connections?: Array<{ name?: string; out_bytes: number; out_msgs: number; in_msgs: number }>;
      }>('/connz?limit=4096');
      return (connz.connections ?? []).map((connection) => ({
        name: connection.name ?? '',
        outBytes: connection.out_bytes,
        outMsgs: connection.out_msgs,
        inMsgs: connection.in_msgs,
      }));
    },
    async stop() {
      process.off('exit', killOnExit);
      await stopProcesses([child]);
      rmSync(store, { recursive: true, force: true });
    },
  };
}
