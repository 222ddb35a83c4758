/**
 * A DevTools protocol session with another Node process on this machine: `SIGUSR1` opens its
 * inspector (on 127.0.0.1:9229, Node's default, for that process only), and the protocol goes
 * over Node's own `WebSocket`. For benchmarks that ask a running service for what its flags
 * cannot give at start-up (sampled allocations with the collected ones kept).
 */
import { sleep } from './stats.ts';

export interface InspectorSession {
  send<T = unknown>(method: string, params?: Record<string, unknown>): Promise<T>;
  close(): void;
}

const INSPECTOR = 'http://127.0.0.1:9229';

export async function openInspector(pid: number): Promise<InspectorSession> {
  process.kill(pid, 'SIGUSR1');
  let targets: Array<{ webSocketDebuggerUrl: string }> | undefined;
  // The process opens its inspector on its next turn: on a loaded machine that may take a while.
  for (let attempt = 0; !targets; attempt++) {
    try {
      targets = (await (await fetch(`${INSPECTOR}/json/list`)).json()) as typeof targets;
    } catch (error) {
      if (attempt >= 100) throw new Error(`no inspector on ${INSPECTOR} for pid ${pid}`, { cause: error });
      await sleep(100);
    }
  }
  const socket = new WebSocket(targets![0]!.webSocketDebuggerUrl);
  await new Promise((resolve, reject) => {
    socket.addEventListener('open', resolve, { once: true });
    socket.addEventListener('error', reject, { once: true });
  });
  let lastId = 0;
  const waiting = new Map<number, { resolve(value: unknown): void; reject(error: Error): void }>();
  socket.addEventListener('message', (event) => {
    const message = JSON.parse(String(event.data)) as {
      id?: number;
      result?: unknown;
      error?: { message: string };
    };
    const entry = message.id === undefined ? undefined : waiting.get(message.id);
    if (!entry) return;
    waiting.delete(message.id!);
    if (message.error) entry.reject(new Error(message.error.message));
    else entry.resolve(message.result);
  });
  const session: InspectorSession = {
    send: <T>(method: string, params: Record<string, unknown> = {}) =>
      new Promise<T>((resolve, reject) => {
        const id = ++lastId;
        waiting.set(id, { resolve: resolve as (value: unknown) => void, reject });
        socket.send(JSON.stringify({ id, method, params }));
      }),
    close: () => socket.close(),
  };
  // Another process may hold the port (one signalled earlier and still running): the figures
  // must be this one's.
  const { result } = await session.send<{ result: { value?: unknown } }>('Runtime.evaluate', {
    expression: 'process.pid',
  });
  if (result.value !== pid) {
    session.close();
    throw new Error(`the inspector on ${INSPECTOR} is pid ${String(result.value)}'s, not ${pid}'s`);
  }
  return session;
}
