/**
 * `npm run demo`: migrates, seeds a demo author, starts the fake LLM and the six services as
 * child processes, sends one writing request, prints the SSE frames live and then the saved
 * chapter. Needs NATS (JetStream), Redis and PostgreSQL at the configured URLs. It builds the web
 * app first (apps/web, served by the gateway at `/`) and prints its URL; `npm start` (`--serve`)
 * keeps the stack up on GATEWAY_PORT (default 8080) after the demo run, until Ctrl+C.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { connectBus } from '@quill/bus';
import { createQuillClient } from '@quill/client';
import { loadConfig } from '@quill/config';
import { createPool, ensureDatabase, getFile, migrate } from '@quill/db';
import { seedDemo } from '@quill/db/seed';
import {
  fillLocalCompileCache,
  REPO_ROOT,
  SERVICE_START_ORDER,
  type ServiceProcess,
  spawnService,
  stopProcesses,
} from '../test/support/service-process.ts';
import { buildWebApp } from '../test/support/web-build.ts';
import { checkDependencies } from './lib-dependencies.ts';
import { printFrame } from './lib-print-frame.ts';

const DEMO_MESSAGE = '写第一章：雨夜里的旧书店';
const DEMO_API_KEY = 'qk_demo_local_only_not_a_secret';
const SERVE = process.argv.includes('--serve');

const config = loadConfig();
const problems = await checkDependencies(config);
if (problems.length > 0) {
  for (const problem of problems) {
    console.error(`✗ ${problem.name} is not reachable at ${problem.url}: ${problem.error}`);
    console.error(`  start it with: ${problem.hint}`);
  }
  process.exit(1);
}

const startedAt = performance.now();
await ensureDatabase(config.DATABASE_URL);
const pool = createPool(config.DATABASE_URL, { max: 2 });
const applied = await migrate(pool);
console.log(`• database ready (${applied.length} migration(s) applied)`);
const demo = await seedDemo(pool, { apiKey: DEMO_API_KEY });
console.log(`• demo author seeded: project ${demo.projectId}, API key ${demo.apiKey}`);

await buildWebApp();
console.log('• web app built (apps/web/dist)');

const children: ChildProcess[] = [];
let exitCode = 1;
try {
  const fakeLlmUrl = await startFakeLlm(children);
  console.log(`• fake LLM at ${fakeLlmUrl}`);
  const env: Record<string, string> = {
    ...stringEnv(),
    QUILL_ENV_PRIORITY: 'process',
    LLM_PRIMARY_BASE_URL: fakeLlmUrl,
    GATEWAY_PORT: SERVE ? String(config.GATEWAY_PORT) : '0',
    LOG_LEVEL: 'warn',
  };
  const services: ServiceProcess[] = [];
  fillLocalCompileCache();
  for (const name of SERVICE_START_ORDER) {
    const service = await spawnService(
      name,
      `demo-${name}`,
      { ...env, LOG_LEVEL: 'info' },
      {
        onLine: (line) => {
          if (/"level":(50|60)/.test(line)) console.error(`  [${name}] ${line}`);
        },
      },
    );
    services.push(service);
    children.push(service.child);
  }
  const gateway = services.find((service) => service.name === 'gateway')!.baseUrl!;
  console.log(`• six services up; gateway at ${gateway}`);
  console.log(`• web app: ${gateway}/ (API key ${demo.apiKey}, project id ${demo.projectId})\n`);

  console.log(`作者: ${DEMO_MESSAGE}\n`);
  const runStartedAt = performance.now();
  // The typed client (libs/client): it resumes the stream by itself if the connection drops.
  const client = createQuillClient({ baseUrl: gateway, token: demo.apiKey });
  const run = await client.agent.stream({ project_id: demo.projectId, message: DEMO_MESSAGE });
  const frames = [];
  for await (const { frame } of run) {
    printFrame(frame);
    frames.push(frame);
  }
  const runMs = performance.now() - runStartedAt;

  const types = frames.map((frame) => frame.type);
  const saved = frames.find((frame) => frame.type === 'file_saved');
  if (saved?.type === 'file_saved') {
    const file = await getFile(pool, demo.projectId, saved.file_id);
    console.log(
      `\n──── saved chapter: ${file?.title} (version ${file?.version}, ${file?.content.length} chars) ────`,
    );
    console.log(file?.content);
    console.log('────');
  }
  const runId = run.runId;
  console.log(`\nrun ${runId}: ${types.length} frames, terminal: ${types.at(-2)}`);
  console.log(
    `run wall time ${runMs.toFixed(0)} ms; demo wall time ${(performance.now() - startedAt).toFixed(0)} ms`,
  );
  console.log(`NATS messages published for this run: ${await countRunMessages(runId)}`);
  exitCode = types.at(-1) === 'done' && types.at(-2) === 'workflow_complete' ? 0 : 1;
  if (SERVE) {
    console.log(`\nthe stack stays up: open ${gateway}/ in a browser; Ctrl+C stops it`);
    await new Promise<void>((resolve) => {
      process.once('SIGINT', resolve);
      process.once('SIGTERM', resolve);
    });
  }
} catch (error) {
  console.error('demo failed:', error instanceof Error ? error.message : error);
} finally {
  await stopProcesses(children);
  await pool.end();
}
process.exit(exitCode);

async function startFakeLlm(children: ChildProcess[]): Promise<string> {
  const child = spawn(process.execPath, ['test/fake-llm/src/main.ts', '--port', '0'], {
    cwd: REPO_ROOT,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.push(child);
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`fake LLM exited with ${code}`)));
    child.stdout!.on('data', (chunk: Buffer) => {
      const url = /listening on (\S+)/.exec(chunk.toString())?.[1];
      if (url) resolve(url);
    });
  });
}

/** JetStream messages of the run (start, tasks, frames, steps, usage) plus the 3 core requests. */
async function countRunMessages(runId: string): Promise<string> {
  const bus = await connectBus({
    url: config.NATS_URL,
    namespace: config.QUILL_BUS_NAMESPACE,
    name: 'demo-count',
  });
  try {
    const info = await bus.jsm.streams.info(bus.names.streams.events, {
      subjects_filter: `${bus.names.events(runId).replace(/\.events$/, '.*')}`,
    });
    const perSubject = info.state.subjects ?? {};
    const frames = perSubject[bus.names.events(runId)] ?? 0;
    const steps = perSubject[bus.names.steps(runId)] ?? 0;
    const usage = perSubject[bus.names.usage(runId)] ?? 0;
    // runs.start and task messages are consumed from work queues, so they are counted from the design: one start, one task per dispatched step.
    const tasks = steps / 2;
    const requests = 3;
    const total = frames + steps + usage + 1 + tasks + requests * 2;
    return `${total} (frames ${frames}, step records ${steps}, usage ${usage}, run start 1, tasks ${tasks}, request/reply ${requests * 2})`;
  } finally {
    await bus.close();
  }
}

function stringEnv(): Record<string, string> {
  return Object.fromEntries(
    Object.entries(process.env).filter((entry): entry is [string, string] => entry[1] !== undefined),
  );
}
