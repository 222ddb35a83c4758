import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { eventually, postJson, slowReply } from '../support/api.ts';
import { type Sample, scrape, sumOf } from '../support/prometheus.ts';
import { frameTypes, type ReceivedFrame, readStream, startRun } from '../support/sse-client.ts';
import { type ServiceName, type Stack, startStack } from '../support/stack.ts';

let stack: Stack;

beforeAll(async () => {
  stack = await startStack();
});

afterAll(async () => {
  await stack?.stop();
});

function opsUrlOf(name: ServiceName): string {
  const service = stack.services.find((candidate) => candidate.name === name);
  if (!service?.opsUrl) throw new Error(`${name} logged no ops_address:\n${service?.output()}`);
  return service.opsUrl;
}

async function scrapeAll(): Promise<Record<ServiceName, Sample[]>> {
  const names: ServiceName[] = ['gateway', 'router', 'writer', 'reviewer', 'context', 'billing'];
  const scraped = await Promise.all(names.map((name) => scrape(opsUrlOf(name))));
  return Object.fromEntries(names.map((name, index) => [name, scraped[index]!])) as Record<
    ServiceName,
    Sample[]
  >;
}

function names(samples: Sample[]): string {
  return [...new Set(samples.map((sample) => sample.name))].join(', ');
}

describe('metrics on every service', () => {
  it('serves /livez and /readyz on each service’s ops port', async () => {
    for (const service of stack.services) {
      const live = await fetch(`${service.opsUrl}/livez`);
      const ready = await fetch(`${service.opsUrl}/readyz`);
      expect([service.name, live.status, ready.status]).toEqual([service.name, 200, 200]);
    }
  });

  it('moves the run, model, frame, billing, queue and context metrics during a real run', async () => {
    // A file for the compile to read: its text is new to the context replica, so it is a miss.
    const created = await postJson(stack.gateways[0]!, `/projects/${stack.projectId}/files`, stack.apiKey, {
      title: '第一章',
      file_type: 'draft',
      content: '雨夜里的旧书店，铜铃响了一声。',
    });
    expect(created.status).toBe(201);
    const before = await scrapeAll();
    const response = await startRun(stack.gateways[0]!, stack.apiKey, {
      project_id: stack.projectId,
      message: '写第一章：雨夜里的旧书店',
    });
    expect(response.status).toBe(200);
    const result = await readStream(response);
    expect(frameTypes(result).at(-1)).toBe('done');
    // The router archives the run after `done` (docs/architecture.md "Run archive"), so its
    // handler, and with it the active-runs gauge, ends a moment later: wait for that, not a time.
    await vi.waitFor(async () => expect(sumOf((await scrapeAll()).router, 'quill_runs_active')).toBe(0), {
      timeout: 60_000,
      interval: 200,
    });
    const after = await scrapeAll();
    const moved = (service: ServiceName, name: string, labels: Record<string, string> = {}) =>
      sumOf(after[service], name, labels) - sumOf(before[service], name, labels);

    expect(moved('gateway', 'quill_runs_started_total'), names(after.gateway)).toBe(1);
    expect(moved('gateway', 'quill_sse_frame_delay_seconds_count'), names(after.gateway)).toBeGreaterThan(3);
    // The stream ended, so no stream is open any more.
    expect(sumOf(after.gateway, 'quill_sse_streams_open')).toBe(0);

    expect(moved('router', 'quill_runs_finished_total', { terminal: 'complete' }), names(after.router)).toBe(
      1,
    );
    expect(sumOf(after.router, 'quill_runs_active')).toBe(0);
    expect(
      after.router.some(
        (sample) =>
          sample.name === 'quill_jetstream_consumer_pending' && sample.labels.consumer?.includes('router'),
      ),
      names(after.router),
    ).toBe(true);

    expect(
      moved('writer', 'quill_model_calls_total', { outcome: 'ok' }),
      names(after.writer),
    ).toBeGreaterThan(0);
    expect(moved('writer', 'quill_model_tokens_total', { gen_ai_token_type: 'output' })).toBeGreaterThan(0);
    expect(moved('writer', 'quill_model_time_to_first_token_seconds_count')).toBeGreaterThan(0);
    expect(
      after.writer.filter((sample) => sample.name === 'quill_jetstream_consumer_redelivered').length,
    ).toBeGreaterThan(0);

    expect(
      moved('billing', 'quill_billing_settlements_total', { decision: 'charge' }),
      names(after.billing),
    ).toBe(1);

    expect(moved('context', 'quill_context_text_cache_misses_total'), names(after.context)).toBeGreaterThan(
      0,
    );
    expect(sumOf(after.context, 'quill_context_text_cache_bytes')).toBeGreaterThan(0);
    expect(sumOf(after.context, 'quill_context_text_cache_entries')).toBeGreaterThan(0);
  });

  it('reports each process’s event loop delay and utilisation, its collections and its heap', async () => {
    // The delay's figures need a few samples since the previous scrape (the instrumentation skips
    // a window with fewer), so they are read until every service has them.
    const all = await vi.waitFor(
      async () => {
        const scraped = await scrapeAll();
        for (const [service, samples] of Object.entries(scraped))
          expect(
            samples.some((sample) => sample.name === 'nodejs_eventloop_delay_p99'),
            `${service}: ${names(samples)}`,
          ).toBe(true);
        return scraped;
      },
      { timeout: 30_000, interval: 100 },
    );
    for (const [service, samples] of Object.entries(all)) {
      const p50 = sumOf(samples, 'nodejs_eventloop_delay_p50');
      const p99 = sumOf(samples, 'nodejs_eventloop_delay_p99');
      // A sample is the time between two ticks of a 10-ms timer: never less than the interval
      // by more than the clock's rounding, and a p99 at least the median.
      expect([service, p50 > 0.009, p99 >= p50]).toEqual([service, true, true]);
      const busy = sumOf(samples, 'nodejs_eventloop_utilization');
      expect([service, busy > 0 && busy <= 1]).toEqual([service, true]);
      expect([service, sumOf(samples, 'v8js_memory_heap_used') > 0], names(samples)).toEqual([service, true]);
    }
    // Every process has collected its young generation since start-up (loading its modules alone
    // allocates far more than one).
    for (const service of ['gateway', 'writer'] as const)
      expect(sumOf(all[service], 'v8js_gc_duration_count'), names(all[service])).toBeGreaterThan(0);
  });

  it('counts a steer and a stop, and the stopped run by its reason', async () => {
    stack.fakeLlm.addScript({ match: { role: 'writer' }, responses: [slowReply(20)] });
    const before = await scrapeAll();
    const response = await startRun(stack.gateways[0]!, stack.apiKey, {
      project_id: stack.projectId,
      message: '写一段很长的开头',
    });
    const runId = response.headers.get('x-quill-run-id')!;
    const frames: ReceivedFrame[] = [];
    const reading = readStream(response, { onFrame: (received) => frames.push(received) });
    await eventually(async () =>
      frames.some((received) => received.frame.type === 'text') ? true : undefined,
    );
    const open = await scrape(opsUrlOf('gateway'));
    expect(sumOf(open, 'quill_sse_streams_open')).toBe(1);
    expect(sumOf((await scrapeAll()).router, 'quill_runs_active')).toBe(1);
    const sessionId = response.headers.get('x-quill-session-id')!;
    expect(
      (
        await postJson(stack.gateways[0]!, '/agent/steer', stack.apiKey, {
          session_id: sessionId,
          message: '快一点',
        })
      ).status,
    ).toBe(202);
    expect((await postJson(stack.gateways[0]!, '/agent/stop', stack.apiKey, { run_id: runId })).status).toBe(
      202,
    );
    await reading;
    // The router archives the run after `done` (docs/architecture.md "Run archive"), so its
    // handler, and with it the active-runs gauge, ends a moment later: wait for that, not a time.
    await vi.waitFor(async () => expect(sumOf((await scrapeAll()).router, 'quill_runs_active')).toBe(0), {
      timeout: 60_000,
      interval: 200,
    });
    const after = await scrapeAll();
    const moved = (service: ServiceName, name: string, labels: Record<string, string> = {}) =>
      sumOf(after[service], name, labels) - sumOf(before[service], name, labels);
    expect(moved('gateway', 'quill_run_steering_messages_total', { stage: 'queued' })).toBe(1);
    expect(moved('gateway', 'quill_run_stop_requests_total', { reason: 'user_stopped' })).toBe(1);
    expect(
      moved('router', 'quill_runs_finished_total', { terminal: 'stopped', reason: 'user_stopped' }),
    ).toBe(1);
    expect(sumOf(after.router, 'quill_runs_active')).toBe(0);
  });
});
