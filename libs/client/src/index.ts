export { createQuillClient, type QuillClient, type QuillClientOptions } from './client.ts';
export { QuillApiError } from './errors.ts';
export { openRunEventSource } from './event-source.ts';
export type { StreamedFrame } from './run-stream.ts';
