export { createQuillClient, type QuillClient, type QuillClientOptions, type RunStream } from './client.ts';
export { QuillApiError } from './errors.ts';
export {
  openRunEventSource,
  type RunEventSource,
  type RunEventSourceOptions,
  type TicketSource,
} from './event-source.ts';
export type { PageOptions } from './product.ts';
export { type RunStreamOptions, readRunStream, type StreamedFrame } from './run-stream.ts';
