import { randomUUID } from 'node:crypto';
import { type JetStreamManager, jetstreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { busNames } from '@quill/contracts';
import { ensureQuotaAccount } from '@quill/db/billing';
import { createProject, createUser, storeApiKey } from '@quill/db/gateway';
import type { Pool } from 'pg';
import { seedChineseProject } from '../../support/chinese-project.ts';
import type { FakeLlmProcess, FakeLlmProcessOptions } from '../../support/fake-llm-process.ts';
import { fillLocalCompileCache, type ServiceName } from '../../support/service-process.ts';
import { type Stack, startStack } from '../../support/stack.ts';
import { testUrls } from '../../support/urls.ts';
import { natsServerPid as natsServerPidOf } from './proc.ts';

/**
 * Limits a benchmark raises so that only the machine decides how far it goes: per-user run and
 * rate limits, worker and router slots. The router calls no model (`AGENT_ROUTER_STRATEGY=off`:
 * fast runs go straight to the writer), so a run makes exactly one model call.
 */
export const BENCH_ENV: Record<string, string> = {
  AGENT_ROUTER_STRATEGY: 'off',
  USER_MAX_CONCURRENT_RUNS: '100000',
  GATEWAY_RATE_LIMIT_PER_MINUTE: '1000000',
  WORKER_CONCURRENCY: '2048',
  ROUTER_CONCURRENCY: '4096',
  DATABASE_POOL_MAX: '10',
};

/** One author with a project: runs are spread over several, as a real fleet's users are. */
export interface BenchAuthor {
  /** `authorization` header. */
  readonly auth: Record<string, string>;
  readonly projectId: string;
}

export interface BenchStack {
  readonly stack: Stack;
  readonly fake: FakeLlmProcess;
  readonly gateway: string;
  /**
   * The demo author first, then the others. One author's credit row is locked by every
   * reservation, so a single author would measure Postgres row-lock queueing, not Quill.
   */
  readonly authors: readonly BenchAuthor[];
  /** The author of run number `index` (round robin). */
  author(index: number): BenchAuthor;
  /** Every live service process by instance id, for CPU and memory reads. */
  pids(): Record<string, number | undefined>;
  /** The processes around Quill: the fake LLM, nats-server (shared with the machine) and this client. */
  otherPids(): Record<string, number | undefined>;
  /** The last sequence of RUNS, TASKS and EVENTS: their difference is what was published. */
  publishedCounts(): Promise<Record<'runs' | 'tasks' | 'events', number>>;
  stop(): Promise<void>;
}

export async function startBenchStack(
  options: {
    replicas?: Partial<Record<ServiceName, number>>;
    namespace?: string;
    env?: Record<string, string>;
    fake?: FakeLlmProcessOptions;
    /** A nats-server of the benchmark's own (at NATS_URL) instead of the machine's. */
    natsServerPid?: number;
    /** How many authors the runs are spread over; default 50. */
    authors?: number;
    /** Node options for every service process, and their stdout lines as they come (`--gc`). */
    nodeFlags?: readonly string[];
    onServiceLine?: (instanceId: string, line: string) => void;
  } = {},
): Promise<BenchStack> {
  // The services start from compiled modules, as the image's do (their memory and start-up CPU).
  fillLocalCompileCache();
  const stack = await startStack({
    ...(options.replicas ? { replicas: options.replicas } : {}),
    ...(options.namespace ? { namespace: options.namespace } : {}),
    env: { ...BENCH_ENV, ...options.env },
    fakeLlmProcess: options.fake ?? {},
    ...(options.nodeFlags ? { nodeFlags: options.nodeFlags } : {}),
    ...(options.onServiceLine ? { onServiceLine: options.onServiceLine } : {}),
  });
  let nats: NatsConnection | undefined;
  let jsm: JetStreamManager | undefined;
  const authors: BenchAuthor[] = [
    { auth: { authorization: `Bearer ${stack.apiKey}` }, projectId: stack.projectId },
  ];
  try {
    authors.push(...(await seedAuthors(stack.pool, (options.authors ?? 50) - 1)));
    // Enough credits for every run a benchmark starts.
    await stack.pool.query('UPDATE quota_accounts SET credits = 100000000, daily_token_cap = NULL');
    nats = await connect({ servers: testUrls.nats, name: 'bench-counter' });
    jsm = await jetstreamManager(nats);
  } catch (error) {
    await nats?.close();
    await stack.stop();
    throw error;
  }
  const names = busNames(stack.namespace).streams;
  const fake = stack.fakeLlmProcess!;
  const natsServerPid = options.natsServerPid ?? natsServerPidOf(testUrls.nats);
  return {
    stack,
    fake,
    gateway: stack.gateways[0]!,
    authors,
    author: (index) => authors[index % authors.length]!,
    pids() {
      const pids: Record<string, number | undefined> = {};
      for (const service of stack.services) {
        if (service.child.exitCode === null) pids[service.instanceId] = service.child.pid;
      }
      return pids;
    },
    otherPids: () => ({
      'fake-llm': fake.child.pid,
      'nats-server': natsServerPid,
      'bench-client': process.pid,
    }),
    async publishedCounts() {
      const [runs, tasks, events] = await Promise.all(
        [names.runs, names.tasks, names.events].map(
          async (name) => (await jsm!.streams.info(name)).state.last_seq,
        ),
      );
      return { runs: runs!, tasks: tasks!, events: events! };
    },
    async stop() {
      await nats?.close();
      await stack.stop();
    },
  };
}

async function seedAuthors(pool: Pool, count: number): Promise<BenchAuthor[]> {
  const authors: BenchAuthor[] = [];
  for (let index = 0; index < count; index++) {
    authors.push(
      await seedAuthor(pool, `Bench ${index}`, (ownerId) =>
        createProject(pool, { ownerId, title: `Bench ${index}` }).then((project) => project.id),
      ),
    );
  }
  return authors;
}

/**
 * An author whose project is a 200-file novel (the context benchmark's: 120 chapters, characters,
 * settings, outlines), so that a launch's compile assembles a real context from it.
 */
export function seedNovelAuthor(bench: BenchStack): Promise<BenchAuthor> {
  return seedAuthor(
    bench.stack.pool,
    'Bench novelist',
    async (ownerId) => (await seedChineseProject(bench.stack.pool, ownerId)).projectId,
  );
}

async function seedAuthor(
  pool: Pool,
  displayName: string,
  project: (ownerId: string) => Promise<string>,
): Promise<BenchAuthor> {
  const tag = randomUUID().replaceAll('-', '');
  const user = await createUser(pool, { email: `bench-${tag}@quill.test`, displayName });
  await ensureQuotaAccount(pool, user.id, 100_000_000);
  const projectId = await project(user.id);
  const key = `qk_bench_${tag}${Math.random().toString(36).slice(2, 10)}`;
  await storeApiKey(pool, user.id, key, 'bench');
  return { auth: { authorization: `Bearer ${key}` }, projectId };
}

/** CPU of the six services summed, from a per-process CPU record keyed by instance id. */
export function serviceCpuMs(perProcess: Record<string, number>): number {
  return Object.values(perProcess).reduce((total, value) => total + value, 0);
}

/** `--env KEY=VALUE` options (the value may hold `=`) as an env record. */
export function envFromPairs(pairs: readonly string[]): Record<string, string> {
  return Object.fromEntries(
    pairs.map((pair) => {
      const at = pair.indexOf('=');
      return at < 0 ? [pair, ''] : [pair.slice(0, at), pair.slice(at + 1)];
    }),
  );
}
