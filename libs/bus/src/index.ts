export { type AckedPublisher, createAckedPublisher, PublishAckError } from './acked-publisher.ts';
export { backoffDelay, isTransientNatsError, type RetryOptions, retryWithBackoff } from './backoff.ts';
export { decodeEnvelope, encodeJson, InvalidEnvelopeError, runIdFromSubject } from './codec.ts';
export { type Bus, type BusOptions, connectBus } from './connection.ts';
export type { ConnectionState } from './connection-state.ts';
export {
  ack,
  type ConsumerHandle,
  consumeDurable,
  type DeliveryContext,
  type Disposition,
  type DurableConsumerOptions,
  nak,
  runAttributes,
  term,
} from './consume.ts';
export { type ConsumerLag, consumerLag } from './consumer-lag.ts';
export { countStored, type OrderedItem, type OrderedReader, readOrdered, readStored } from './ordered.ts';
export { type PublishOptions, publishCore, publishEnvelope, subjectFamily } from './publish.ts';
export {
  lastSequence,
  lastStored,
  nextStored,
  type RawReader,
  type RawStoredMessage,
  readOrderedRaw,
} from './raw-reads.ts';
export {
  BusRequestError,
  type RequestOptions,
  type Responder,
  requestReply,
  serveRequests,
} from './request.ts';
export { publishFrame } from './run-events.ts';
export { runTraceContext } from './run-trace.ts';
export { ensureRoleConsumer, ensureStreams, ensureUsageConsumer, type StreamSettings } from './streams.ts';
export { contextFromHeaders, tracedHeaders } from './tracing.ts';
