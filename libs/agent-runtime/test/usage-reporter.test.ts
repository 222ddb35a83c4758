import { randomUUID } from 'node:crypto';
import { type Bus, readStored } from '@quill/bus';
import { type TaskEnvelope, UsageEnvelope } from '@quill/contracts';
import type { LlmAttempt } from '@quill/llm';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeTestBus, openTestBus } from '../../../test/support/test-bus.ts';
import { createUsageReporter } from '../src/usage-reporter.ts';

let bus: Bus;

beforeAll(async () => {
  bus = await openTestBus('usage', 'test');
});
afterAll(() => closeTestBus(bus));

const attempt = (index: number, provider: string, outcome: 'ok' | 'failed'): LlmAttempt => ({
  index,
  provider,
  model: `${provider}-model`,
  outcome,
  usage: { prompt_tokens: 1, completion_tokens: 0, total_tokens: 1, usage_source: 'estimate' },
  outputStarted: false,
  durationMs: 1,
  trimmedToolResults: 0,
});

describe('usage reporter', () => {
  it('records every attempt, and counts a switch of provider but not a retry of the same one', async () => {
    const runId = randomUUID();
    const task = {
      run_id: runId,
      user_id: randomUUID(),
      step: 1,
      role: 'writer',
    } as TaskEnvelope;
    const reporter = createUsageReporter(bus, task, 1, pino({ level: 'silent' }));
    const retried = reporter.hookFor(0);
    retried(attempt(0, 'primary', 'failed'));
    retried(attempt(1, 'primary', 'ok'));
    const switched = reporter.hookFor(1);
    switched(attempt(0, 'primary', 'failed'));
    switched(attempt(1, 'backup', 'ok'));
    await reporter.flush();

    expect(reporter.failovers).toBe(1);
    const stored = await readStored(bus, {
      stream: bus.names.streams.events,
      subject: bus.names.usage(runId),
      schema: UsageEnvelope,
    });
    expect(
      stored.map((item) => [item.envelope!.call_index, item.envelope!.attempt, item.envelope!.provider]),
    ).toEqual([
      [1000, 0, 'primary'],
      [1000, 1, 'primary'],
      [1001, 0, 'primary'],
      [1001, 1, 'backup'],
    ]);
  });
});
