import { type ChildProcess, spawn } from 'node:child_process';
import type { RecordedRequest, RequestFilter, ScriptInput } from '@quill/fake-llm';
import { REPO_ROOT, stopProcesses } from './service-process.ts';

export interface FakeLlmProcessOptions {
  ttftMs?: number;
  tokensPerSecond?: number;
}

/**
 * The fake LLM as its own process (`test/fake-llm/src/main.ts`), for benchmarks: its pacing
 * timers then do not share an event loop with the client that measures the streams. Scripts and
 * the request log go through its `/__` control routes.
 */
export interface FakeLlmProcess {
  readonly url: string;
  readonly port: number;
  readonly child: ChildProcess;
  addScript(script: ScriptInput): Promise<void>;
  clearScripts(): Promise<void>;
  requests(filter?: RequestFilter): Promise<RecordedRequest[]>;
  clearRequests(): Promise<void>;
  close(): Promise<void>;
}

export async function startFakeLlmProcess(options: FakeLlmProcessOptions = {}): Promise<FakeLlmProcess> {
  const child = spawn(
    process.execPath,
    [
      'test/fake-llm/src/main.ts',
      '--port',
      '0',
      '--ttft-ms',
      String(options.ttftMs ?? 0),
      '--tokens-per-second',
      String(options.tokensPerSecond ?? 0),
    ],
    { cwd: REPO_ROOT, env: { PATH: process.env.PATH ?? '' }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`fake-llm not ready:\n${output}`)), 15_000);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`fake-llm exited with ${code}:\n${output}`));
    });
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const match = /listening on (\S+)/.exec(output);
      if (!match) return;
      clearTimeout(timer);
      resolve(match[1]!);
    });
    child.stderr!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
  });
  const origin = url.replace(/\/v1$/, '');
  const control = async (method: string, path: string, body?: unknown): Promise<unknown> => {
    const response = await fetch(`${origin}${path}`, {
      method,
      ...(body === undefined
        ? {}
        : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
    });
    if (!response.ok)
      throw new Error(`fake-llm ${method} ${path}: ${response.status} ${await response.text()}`);
    return response.json();
  };
  return {
    url,
    port: Number(new URL(url).port),
    child,
    addScript: async (script) => void (await control('POST', '/__scripts', script)),
    clearScripts: async () => void (await control('DELETE', '/__scripts')),
    async requests(filter = {}) {
      const query = new URLSearchParams();
      if (filter.run_id) query.set('run_id', filter.run_id);
      if (filter.role) query.set('role', filter.role);
      const body = (await control('GET', `/__requests?${query}`)) as { requests: RecordedRequest[] };
      return body.requests;
    },
    clearRequests: async () => void (await control('DELETE', '/__requests')),
    close: () => stopProcesses([child]),
  };
}
