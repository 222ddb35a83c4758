export { createAckedPublisher } from './acked-publisher.ts';
export { retryWithBackoff } from './backoff.ts';
export { decodeEnvelope, InvalidEnvelopeError, runIdFromSubject } from './codec.ts';
export { type Bus, connectBus } from './connection.ts';
export {
  ack,
  type ConsumerHandle,
  consumeDurable,
  type DeliveryContext,
  type Disposition,
  nak,
  term,
} from './consume.ts';
export { consumerLag } from './consumer-lag.ts';
export { republishesTo, subscribePublished, subscribeRepublished } from './live-reads.ts';
export { countStored, type OrderedItem, readOrdered, readStored } from './ordered.ts';
export { publishCore, publishEnvelope } from './publish.ts';
export { lastSequence, lastStored, nextStored, readOrderedRaw } from './raw-reads.ts';
export { BusRequestError, type Responder, requestReply, serveRequests } from './request.ts';
export { onReconnect } from './resubscribe.ts';
export {
  publishFrame,
  RUN_RECORD_CLOCK_MARGIN_MS,
  type RunRecordStart,
  readRunFramesAndSteps,
  readStoredRun,
  runStartedIfNewest,
  runStartSeq,
} from './run-events.ts';
export { runTraceContext } from './run-trace.ts';
export {
  ensureRoleConsumer,
  ensureStreams,
  ensureUsageConsumer,
  type StreamSettings,
  TASK_MAX_DELIVER,
} from './streams.ts';
