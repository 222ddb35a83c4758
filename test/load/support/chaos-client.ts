import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SseFrame } from '@quill/contracts';
import { preciseNow, readSse } from './sse-reader.ts';

/** One frame as a client saw it. */
export interface TimedFrame {
  seq: number;
  frame: SseFrame;
  at: number;
}

export interface ClientRun {
  runId: string | undefined;
  status: number;
  frames: TimedFrame[];
  /** When any bytes of an event or a heartbeat arrived, in order (the client's view of liveness). */
  beats: number[];
  reconnects: number;
  startedAt: number;
  endedAt: number;
}

// A stream whose gateway died is picked up again on another one, as @quill/client does; bounded
// so a run that never ends cannot loop forever.
const MAX_RECONNECTS = 30;

/**
 * Starts a run on a gateway and reads it to `done` like an author's client: after a dropped
 * connection it resumes with Last-Event-ID on whichever gateway is alive (README "HTTP API").
 */
export async function streamRun(options: {
  gateways: () => string[];
  first: number;
  apiKey: string;
  body: unknown;
  deadlineMs: number;
}): Promise<ClientRun> {
  const run: ClientRun = {
    runId: undefined,
    status: 0,
    frames: [],
    beats: [],
    reconnects: 0,
    startedAt: preciseNow(),
    endedAt: 0,
  };
  const deadline = Date.now() + options.deadlineMs;
  let done = false;
  const onEvent = (event: { id: string | undefined; data: string; receivedAt: number }) => {
    run.beats.push(event.receivedAt);
    const frame = JSON.parse(event.data) as SseFrame;
    run.frames.push({ seq: Number(event.id ?? 0), frame, at: event.receivedAt });
    if (frame.type === 'done') done = true;
    return done;
  };
  const onComment = () => run.beats.push(preciseNow());
  const authorization = { authorization: `Bearer ${options.apiKey}` };
  const first = await readSse({
    url: `${pick(options.gateways(), options.first)}/api/v1/agent/stream`,
    method: 'POST',
    headers: authorization,
    body: options.body,
    onEvent,
    onComment,
  }).catch(() => undefined);
  run.status = first?.status ?? 0;
  const runHeader = first?.headers['x-quill-run-id'];
  run.runId = typeof runHeader === 'string' ? runHeader : undefined;
  while (!done && run.runId && run.reconnects < MAX_RECONNECTS && Date.now() < deadline) {
    run.reconnects++;
    await new Promise((resolve) => setTimeout(resolve, 500));
    const lastSeq = run.frames.at(-1)?.seq ?? 0;
    const resumed = await readSse({
      url: `${pick(options.gateways(), options.first + run.reconnects)}/api/v1/agent/runs/${run.runId}/stream`,
      headers: { ...authorization, 'last-event-id': String(lastSeq) },
      onEvent,
      onComment,
    }).catch(() => undefined);
    // 204: the run's stream already ended with `done` (the client missed nothing it needs).
    if (resumed?.status === 204) break;
  }
  run.endedAt = preciseNow();
  return run;
}

function pick(gateways: string[], index: number): string {
  if (gateways.length === 0) throw new Error('no gateway alive');
  return gateways[index % gateways.length]!;
}

/** A private broker process the benchmark may kill and restart without touching shared ones. */
export interface PrivateServer {
  readonly port: number;
  readonly url: string;
  /** SIGKILL, then the same server again on the same port (and, for NATS, the same store). */
  restart(): Promise<void>;
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
