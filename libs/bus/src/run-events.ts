import type { PubAck } from '@nats-io/jetstream';
import { EventEnvelope, type SseFrame } from '@quill/contracts';
import type { Bus } from './connection.ts';
import { type PublishOptions, publishEnvelope } from './publish.ts';

/** Publishes an author-facing frame to `run.<runId>.events`. */
export function publishFrame(bus: Bus, value: SseFrame, options: PublishOptions = {}): Promise<PubAck> {
  return publishEnvelope(bus, bus.names.events(value.run_id), EventEnvelope, { v: 1, frame: value }, options);
}
