import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { LOCAL_COMPILE_CACHE_DIR } from '../../scripts/compile-cache.ts';

export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

export type ServiceName = 'gateway' | 'router' | 'writer' | 'reviewer' | 'context' | 'billing';
export const SERVICE_START_ORDER: readonly ServiceName[] = [
  'context',
  'billing',
  'router',
  'writer',
  'reviewer',
  'gateway',
];

export interface ServiceProcess {
  readonly name: ServiceName;
  readonly instanceId: string;
  readonly child: ChildProcess;
  /** Everything the process printed, for failure messages. */
  output(): string;
  /** Gateway only: its base URL once ready. */
  baseUrl?: string;
  /** Its health + metrics port (`/livez`, `/readyz`, `/metrics`), from its `ops_address` log. */
  opsUrl?: string;
}

/** The compile cache local service processes share, unless NODE_COMPILE_CACHE names another. */
const compileCacheDir = () => process.env.NODE_COMPILE_CACHE ?? LOCAL_COMPILE_CACHE_DIR;

/**
 * Fills the compile cache with the services' modules (`scripts/compile-cache.ts`, in a process of
 * its own), once before a test run, benchmark or demo starts its services. Without it the first
 * processes strip their own types and fill it when they exit.
 */
export function fillLocalCompileCache(): void {
  const filled = spawnSync(process.execPath, ['scripts/compile-cache.ts', compileCacheDir()], {
    cwd: REPO_ROOT,
    encoding: 'utf8',
  });
  if (filled.status !== 0) throw new Error(`compile cache not filled:\n${filled.stdout}${filled.stderr}`);
}

/**
 * Starts one service exactly as production does (`node --import @quill/telemetry/register …`,
 * with the image's compile cache) and resolves once it logs that it is ready; a gateway started
 * on port 0 reports its address.
 */
export async function spawnService(
  name: ServiceName,
  instanceId: string,
  env: Record<string, string>,
  options: {
    onLine?: (line: string) => void;
    readyTimeoutMs?: number;
    /** Node options before the preload (a benchmark's `--trace-gc`, which NODE_OPTIONS refuses). */
    nodeFlags?: readonly string[];
  } = {},
): Promise<ServiceProcess> {
  const child = spawn(
    process.execPath,
    [...(options.nodeFlags ?? []), '--import', '@quill/telemetry/register', `services/${name}/src/main.ts`],
    {
      cwd: REPO_ROOT,
      env: {
        PATH: process.env.PATH ?? '',
        NODE_COMPILE_CACHE: compileCacheDir(),
        ...env,
        SERVICE_INSTANCE_ID: instanceId,
        OTEL_SERVICE_NAME: name,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let output = '';
  const service: ServiceProcess = { name, instanceId, child, output: () => output };
  await new Promise<void>((resolve, reject) => {
    // A process that never became ready is nobody's to stop later: it goes now.
    const timer = setTimeout(() => {
      child.off('exit', onExit);
      child.kill('SIGKILL');
      reject(new Error(`${instanceId} not ready:\n${output}`));
    }, options.readyTimeoutMs ?? 120_000);
    const onExit = (code: number | null) => {
      clearTimeout(timer);
      reject(new Error(`${instanceId} exited with ${code}:\n${output}`));
    };
    child.once('exit', onExit);
    child.stdout!.on('data', (chunk: Buffer) => {
      const text = chunk.toString();
      output += text;
      if (output.length > 2_000_000) output = output.slice(-1_000_000);
      for (const line of text.split('\n')) {
        if (!line) continue;
        options.onLine?.(line);
        const ops = /"ops_address":"([^"]+)"/.exec(line)?.[1];
        if (ops) service.opsUrl = ops;
        if (!line.includes(' ready"')) continue;
        if (name === 'gateway') service.baseUrl = /"address":"([^"]+)"/.exec(line)?.[1];
        clearTimeout(timer);
        child.off('exit', onExit);
        resolve();
      }
    });
    child.stderr!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
  });
  return service;
}

/** SIGTERM (the services' bounded graceful shutdown), SIGKILL if one is still there after 8 s. */
export async function stopProcesses(children: ChildProcess[]): Promise<void> {
  await Promise.all(
    children.map(
      (child) =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve();
          const timer = setTimeout(() => child.kill('SIGKILL'), 8000);
          child.once('exit', () => {
            clearTimeout(timer);
            resolve();
          });
          child.kill('SIGTERM');
        }),
    ),
  );
}
