export { createQuillClient, type QuillClient, type QuillClientOptions, type RunStream } from './client.ts';
export { QuillApiError } from './errors.ts';
export type { PageOptions } from './product.ts';
export { type RunStreamOptions, readRunStream, type StreamedFrame } from './run-stream.ts';
