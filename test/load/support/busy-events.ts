import { randomUUID } from 'node:crypto';
import { type Bus, publishEnvelope, publishFrame } from '@quill/bus';
import { frame, StepRecordEnvelope, UsageEnvelope } from '@quill/contracts';

/**
 * An EVENTS stream as a busy day leaves it, for the benchmarks of reads of one run in it
 * (record-read.ts, run-start-reads.ts): other runs' frames, then runs stored as runs store them.
 */

export interface TargetRun {
  runId: string;
  launchedAt: string;
  /** Where the run's first step record (`dispatched`) is stored. */
  dispatchedSeq: number;
}

/** Other runs' text frames, as workers store them (quiet publishes in batches), one run after another in turn. */
export async function prefillFrames(target: Bus, count: number, runIds: readonly string[]): Promise<void> {
  const batch = 2000;
  for (let index = 0; index < count; index += batch) {
    const sends: Array<Promise<unknown>> = [];
    for (let offset = index; offset < Math.min(count, index + batch); offset++) {
      const runId = runIds[offset % runIds.length]!;
      sends.push(
        publishFrame(target, frame('text', runId, { agent: 'writer', content: `第${offset}段。` }), {
          quiet: true,
        }),
      );
    }
    await Promise.all(sends);
  }
}

/** One run's record, as the launch, the router, the writer and the finisher store it. */
export async function storeRun(target: Bus): Promise<TargetRun> {
  const runId = randomUUID();
  const launchedAt = new Date().toISOString();
  const started = frame('run_started', runId, {
    session_id: randomUUID(),
    project_id: randomUUID(),
    generation_mode: 'fast',
  });
  await publishFrame(target, started);
  const step = {
    v: 1 as const,
    kind: 'dispatched' as const,
    run_id: runId,
    step: 1,
    role: 'writer' as const,
  };
  const dispatched = await publishEnvelope(target, target.names.steps(runId), StepRecordEnvelope, step, {});
  await publishEnvelope(target, target.names.steps(runId), StepRecordEnvelope, { ...step, step: 2 }, {});
  for (let index = 0; index < 20; index++)
    await publishFrame(target, frame('text', runId, { agent: 'writer', content: `片段${index}` }), {
      quiet: true,
    });
  await publishEnvelope(
    target,
    target.names.usage(runId),
    UsageEnvelope,
    {
      v: 1,
      run_id: runId,
      user_id: randomUUID(),
      call_index: 1000,
      attempt: 0,
      role: 'writer',
      provider: 'fake',
      model: 'fake-1',
      usage: { prompt_tokens: 100, completion_tokens: 20, total_tokens: 120, usage_source: 'provider' },
    },
    {},
  );
  await publishFrame(target, frame('workflow_complete', runId, {}));
  await publishFrame(target, frame('done', runId, {}));
  return { runId, launchedAt, dispatchedSeq: dispatched.seq };
}
