/**
 * Context compile benchmark: compiles the 200-file Chinese project N times against the
 * real Postgres, rotating the focus chapter, the role and the request so each compile assembles
 * a different context. The first (cold) compile is reported apart: it loads the tokenizer tables
 * and counts every file it touches once; later compiles reuse the token-count cache, as a running
 * context replica does (and its text cache, docs/decisions/0061). Each warm compile's CPU is
 * summed apart, up to its stored trace (which the reply does not wait for): this process's and
 * the machine's PostgreSQL's while it ran (read from /proc in clock ticks, so only its sum over
 * many compiles means something). Prints a
 * table and one JSON line.
 *
 * `--one-chapter` keeps the focus on two neighbouring chapters, as an author working on one chapter
 * for many turns does; by default every compile focuses another chapter (most texts new to it).
 *
 *   node test/load/context-compile.ts [--compiles 100] [--one-chapter]
 */
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import type { AgentRole, ContextTrace } from '@quill/contracts';
import { listContextTraces } from '@quill/db';
import { appendMessage, createSession } from '@quill/db/gateway';
import { createTestDatabase } from '@quill/db/testing';
import pino from 'pino';
import { createContextCompiler } from '../../services/context/src/compiler.ts';
import { AUTHOR_REQUESTS, CHAPTER_COUNT, seedNovelist } from '../support/chinese-project.ts';
import { loadAverage, namedProcessesCpuMs } from './support/proc.ts';

const { values } = parseArgs({
  options: {
    compiles: { type: 'string', default: '100' },
    'one-chapter': { type: 'boolean', default: false },
  },
});
const compiles = Number(values.compiles);
const ROLES: AgentRole[] = ['writer', 'planner', 'hook_designer', 'quality_reviewer'];

const database = await createTestDatabase();
try {
  const { userId, project } = await seedNovelist(database.pool);
  const session = await createSession(database.pool, {
    projectId: project.projectId,
    userId,
    title: 'bench',
  });
  const compile = createContextCompiler({
    pool: database.pool,
    llm: null,
    logger: pino({ level: 'silent' }),
    settings: {
      contextTokens: 32_000,
      historyTokens: 32_000,
      ledgerCeiling: 128_000,
      skillTokens: 16_000,
      workingSet: { maxFiles: 8, maxChars: 60_000 },
      compactionEnabled: true,
    },
  });
  const timings: number[] = [];
  const runIds: string[] = [];
  const warmCpu = { own: 0, postgres: 0 };
  for (let index = 0; index <= compiles; index++) {
    const runId = randomUUID();
    const message = AUTHOR_REQUESTS[index % AUTHOR_REQUESTS.length]!;
    await appendMessage(database.pool, {
      sessionId: session.sessionId,
      runId,
      role: 'user',
      content: message,
    });
    const started = performance.now();
    // Read apart from the compile's own CPU: /proc is read by this process.
    const postgresStart = namedProcessesCpuMs('postgres');
    const cpuStart = process.cpuUsage();
    const reply = await compile({
      v: 1,
      run_id: runId,
      session_id: session.sessionId,
      project_id: project.projectId,
      user_id: userId,
      role: ROLES[index % ROLES.length]!,
      message,
      focus_file_id: project.chapter(
        values['one-chapter'] ? 50 + (index % 2) : 1 + ((index * 37) % CHAPTER_COUNT),
      ).id,
      attached_file_ids: [],
      ui_language: 'zh',
      step: 0,
    });
    timings.push(performance.now() - started);
    // The CPU counts the compile's trace too, which the reply does not wait for.
    await compile.settled();
    if (index > 0) {
      const cpu = process.cpuUsage(cpuStart);
      warmCpu.own += (cpu.user + cpu.system) / 1000;
      warmCpu.postgres += namedProcessesCpuMs('postgres') - postgresStart;
    }
    if (!reply.ok) throw new Error(`compile failed: ${reply.code}`);
    await appendMessage(database.pool, {
      sessionId: session.sessionId,
      runId,
      role: 'assistant',
      content: '好的。',
    });
    runIds.push(runId);
  }
  const cold = timings[0]!;
  const warm = timings.slice(1).sort((a, b) => a - b);
  const percentile = (p: number) => warm[Math.min(warm.length - 1, Math.floor((p / 100) * warm.length))]!;
  // The replies do not wait for their traces.
  await compile.settled();
  const traces = (await Promise.all(runIds.slice(1).map((id) => listContextTraces(database.pool, id)))).map(
    (rows) => rows[0]!.trace as ContextTrace,
  );
  const contextTokens = traces.map((trace) => trace.usage.context_tokens);
  const result = {
    benchmark: 'context-compile',
    files: project.files.length,
    compiles: warm.length,
    cold_ms: Number(cold.toFixed(1)),
    p50_ms: Number(percentile(50).toFixed(1)),
    p95_ms: Number(percentile(95).toFixed(1)),
    max_ms: Number(warm.at(-1)!.toFixed(1)),
    own_cpu_ms: Number((warmCpu.own / warm.length).toFixed(1)),
    postgres_cpu_ms: Number((warmCpu.postgres / warm.length).toFixed(1)),
    load_average: loadAverage(),
    context_tokens_max: Math.max(...contextTokens),
    context_budget: 32_000,
    loaded_items_avg: Number(
      (traces.reduce((sum, trace) => sum + trace.loaded.length, 0) / traces.length).toFixed(1),
    ),
  };
  console.log(`compiled ${result.files}-file project ${result.compiles} times (+1 cold)`);
  console.log(`  cold        ${result.cold_ms} ms`);
  console.log(`  p50 / p95   ${result.p50_ms} / ${result.p95_ms} ms (max ${result.max_ms})`);
  console.log(
    `  CPU         ${result.own_cpu_ms} ms in the compiler, ${result.postgres_cpu_ms} ms in PostgreSQL, per warm compile (load ${result.load_average})`,
  );
  console.log(
    `  context     ≤ ${result.context_tokens_max} of ${result.context_budget} tokens, ${result.loaded_items_avg} items`,
  );
  console.log(JSON.stringify(result));
} finally {
  await database.drop();
}
