import { randomUUID } from 'node:crypto';
import { PubHeaders } from '@nats-io/jetstream';
import { trace } from '@opentelemetry/api';
import { EventEnvelope, frame, UsageEnvelope } from '@quill/contracts';
import { withSpan } from '@quill/telemetry';
import { startTestTelemetry } from '@quill/telemetry/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeTestBus, openTestBus } from '../../../test/support/test-bus.ts';
import { type Bus, publishEnvelope, publishFrame } from '../src/index.ts';

let bus: Bus;
let telemetry: Awaited<ReturnType<typeof startTestTelemetry>>;

beforeAll(async () => {
  telemetry = await startTestTelemetry('frame-headers-test');
  bus = await openTestBus('fh', 'test');
});

afterAll(async () => {
  await closeTestBus(bus);
  await telemetry?.shutdown();
});

describe('stored headers of quiet publishes', () => {
  it('a streamed frame keeps its id and no trace header; a quiet usage report keeps the trace', async () => {
    const runId = randomUUID();
    const { frameAck, usageAck, traceId } = await withSpan('step', {}, async () => {
      const frameAck = await publishFrame(bus, frame('text', runId, { agent: 'writer', content: '雨' }), {
        msgId: `${runId}.1.0.0`,
        quiet: true,
        untraced: true,
      });
      const usageAck = await publishEnvelope(
        bus,
        bus.names.usage(runId),
        UsageEnvelope,
        {
          v: 1,
          run_id: runId,
          user_id: randomUUID(),
          role: 'writer',
          call_index: 0,
          attempt: 0,
          provider: 'fake',
          model: 'fake-model',
          usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2, usage_source: 'provider' },
        },
        { msgId: `${runId}:usage`, quiet: true },
      );
      return { frameAck, usageAck, traceId: trace.getActiveSpan()!.spanContext().traceId };
    });
    const stream = bus.names.streams.events;
    const storedFrame = await bus.jsm.streams.getMessage(stream, { seq: frameAck.seq });
    const storedUsage = await bus.jsm.streams.getMessage(stream, { seq: usageAck.seq });
    expect(EventEnvelope.parse(storedFrame!.json()).frame).toMatchObject({ type: 'text', content: '雨' });
    expect(storedFrame!.header.get(PubHeaders.MsgIdHdr)).toBe(`${runId}.1.0.0`);
    expect(storedFrame!.header.has('traceparent')).toBe(false);
    expect(storedUsage!.header.get('traceparent').split('-')[1]).toBe(traceId);
    expect(storedUsage!.header.get(PubHeaders.MsgIdHdr)).toBe(`${runId}:usage`);
  });

  it('refuses an id that would break the header block, before anything is sent', async () => {
    const runId = randomUUID();
    const subject = bus.names.events(runId);
    await expect(
      publishFrame(bus, frame('text', runId, { agent: 'writer', content: 'x' }), {
        msgId: `${runId}.1.0.0\r\nNats-Expected-Stream: other`,
        quiet: true,
        untraced: true,
      }),
    ).rejects.toThrow(/cannot contain/);
    const info = await bus.jsm.streams.info(bus.names.streams.events, { subjects_filter: subject });
    expect(info.state.subjects?.[subject] ?? 0).toBe(0);
  });
});
