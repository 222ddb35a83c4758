import type { PubAck } from '@nats-io/jetstream';
import {
  EventEnvelope,
  RUN_RECORDS_READ_ONE_BY_ONE,
  type SettledRunRecord,
  type SseFrame,
  StepRecordEnvelope,
} from '@quill/contracts';
import type { Bus } from './connection.ts';
import { readStored } from './ordered.ts';
import { type PublishOptions, publishEnvelope } from './publish.ts';

/** Publishes an author-facing frame to `run.<runId>.events`. */
export function publishFrame(bus: Bus, value: SseFrame, options: PublishOptions = {}): Promise<PubAck> {
  return publishEnvelope(bus, bus.names.events(value.run_id), EventEnvelope, { v: 1, frame: value }, options);
}

/**
 * A run's stored frames and step records with their stream sequences, unparseable messages left
 * out: what billing settles from (with the usage reports) and what the router archives. The step
 * records are read as a settled subject (their newest message bounds the read): both read a run
 * once it ended.
 */
export async function readRunFramesAndSteps(bus: Bus, runId: string): Promise<SettledRunRecord> {
  const stream = bus.names.streams.events;
  const [events, steps] = await Promise.all([
    readStored(bus, { stream, subject: bus.names.events(runId), schema: EventEnvelope }),
    readStored(bus, {
      stream,
      subject: bus.names.steps(runId),
      schema: StepRecordEnvelope,
      few: RUN_RECORDS_READ_ONE_BY_ONE,
      settled: true,
    }),
  ]);
  return {
    frames: events.flatMap((item) => (item.envelope ? [{ seq: item.seq, frame: item.envelope.frame }] : [])),
    steps: steps.flatMap((item) => (item.envelope ? [{ seq: item.seq, record: item.envelope }] : [])),
  };
}
